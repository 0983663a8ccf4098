"""Shared set-up of the provider benchmarks: a portal, the scripted models, one recorded conversation.

The conversation has three turns with tools in each: copy crm-dev-neu (get_spoke,
validate_spoke_config, then a question), confirm (create_spoke_pull_request, the URL),
ask whether it is open (get_pull_request), then the simulated user stops.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_evals.agent import mcp_session
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.testing.conversations import (
    AGENT_MODEL,
    CONFIRM,
    THANKS,
    USER_MODEL,
    ConversationScript,
    ScriptedConversations,
    tool_result,
)
from agent_evals.packs.spoke.scripts import SpokeCopy
from agent_evals.testing.scripted_openai import Reply, ScriptedOpenAIServer

CASE = "B01"
COPY = SpokeCopy("[B01]", new_name="crm2-dev-neu", address_space="10.80.0.0/22")
USER = {"goal": "[B01] get a copy of crm-dev-neu and check the pull request is open", "persona": "terse"}
VARS = {"simulated_user": USER}


def script() -> ConversationScript:
    agent = [
        *COPY.agent_steps(),
        lambda r: Reply.tool_calls([("get_pull_request", {"id": tool_result(r, "create_spoke_pull_request")["id"]})]),
        lambda r: Reply.text(f"Yes, it is {tool_result(r, 'get_pull_request')['status']}."),
    ]
    return ConversationScript(COPY.key, agent, [COPY.request, CONFIRM, "Is it open for review?", THANKS])


def context(eval_id: str = "bench") -> dict[str, Any]:
    return {
        "vars": {**VARS, "__evalId": eval_id},
        "test": {"description": f"{CASE} benchmark", "vars": VARS, "metadata": {"id": CASE}},
        "repeatIndex": 0,
        "testIdx": 0,
        "evaluationId": eval_id,
    }


@dataclass
class Bench:
    portal: PortalProcess
    server: ScriptedOpenAIServer
    folder: Path  # where the conversation is recorded


@contextmanager
def bench_environment() -> Iterator[Bench]:
    """A portal on a temporary data dir and the scripted models, in this process's environment."""
    tmp = Path(tempfile.mkdtemp(prefix="provider-bench-"))
    with (
        PortalProcess(data_dir=tmp / "data", token=PortalProcess.new_token(), log_file=tmp / "portal.log") as portal,
        # max_recorded=1: the server shares this process; its request log must not count as the worker's memory
        ScriptedOpenAIServer(ScriptedConversations([script()]), max_recorded=1) as server,
    ):
        for name in ("AZURE_OPENAI_ENDPOINT", "OPENAI_API_KEY", "AGENT_EVALS_RECORD_DIR", "AGENT_EVALS_REPLAY_DIR"):
            os.environ.pop(name, None)
        os.environ.update(
            PORTAL_URL=portal.url, PORTAL_TOKEN=portal.token or "", OPENAI_BASE_URL=server.base_url,
            AGENT_MODEL=AGENT_MODEL, USER_MODEL=USER_MODEL, JUDGE_MODEL="none", LLM_MAX_RETRIES="0",
        )
        yield Bench(portal, server, tmp / "cassettes")


class ToolClock:
    """Sums the time spent in ``McpSession.call`` (the MCP round trips: the tools' own time) and,
    apart, in the portal's REST API (the end-state snapshot: the portal's own work too)."""

    def __init__(self) -> None:
        from agent_evals.packs.spoke.portal.api import PortalAPI

        self.seconds = 0.0
        self.calls = 0
        self.rest_seconds = 0.0
        original = mcp_session.McpSession.call
        original_rest = PortalAPI._request
        clock = self

        async def timed(tools: Any, name: str, arguments: Any) -> Any:
            started = time.perf_counter()
            try:
                return await original(tools, name, arguments)
            finally:
                clock.seconds += time.perf_counter() - started
                clock.calls += 1

        def timed_rest(api: Any, method: str, path: str) -> Any:
            started = time.perf_counter()
            try:
                return original_rest(api, method, path)
            finally:
                clock.rest_seconds += time.perf_counter() - started

        mcp_session.McpSession.call = timed  # type: ignore[method-assign]
        PortalAPI._request = timed_rest  # type: ignore[method-assign]

    def reset(self) -> None:
        self.seconds, self.calls, self.rest_seconds = 0.0, 0, 0.0


def rss_bytes() -> int:
    """The current resident set size of this process (Linux)."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
