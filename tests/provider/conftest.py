"""Helpers for the provider tests: call ``call_api`` as Promptfoo does, check the contract."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_evals.contract import (
    PROVIDER_MARKER_KEY,
    REQUIRED_KEYS,
    AgentInfo,
    PullRequestRef,
    ToolCallRecord,
    TranscriptEntry,
    UsageRecord,
)
from agent_evals.portal.process import PortalProcess
from agent_evals.portal_api import PortalAPI
from agent_evals.provider.run import call_api
from agent_evals.testing.conversations import ConversationScript, ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer

Call = Callable[..., dict[str, Any]]


def context(
    case: str, vars_: Mapping[str, Any] | None = None, *, eval_id: str = "eval-test", repeat: int = 0
) -> dict[str, Any]:
    """A Promptfoo ``context`` for one test (the shape call_api gets from the worker)."""
    return {
        "vars": {**(vars_ or {}), "__evalId": eval_id},
        "test": {"description": f"{case} a test", "vars": dict(vars_ or {}), "metadata": {"id": case}},
        "prompt": {"raw": "", "label": "p"},
        "repeatIndex": repeat,
        "testIdx": 0,
        "evaluationId": eval_id,
    }


@pytest.fixture
def portal_api(live_portal: PortalProcess) -> PortalAPI:
    return PortalAPI(live_portal.url, token=live_portal.token)


@pytest.fixture
def converse(kit_env: dict[str, str], scripted_llm: ScriptedOpenAIServer, tmp_path: Path) -> Call:
    """``converse(scripts, case, vars, config=..., prompt=...)`` → call_api's answer."""

    def run(
        scripts: Iterable[ConversationScript],
        case: str,
        vars_: Mapping[str, Any] | None = None,
        *,
        config: Mapping[str, Any] | None = None,
        prompt: str = "",
        eval_id: str | None = None,
        repeat: int = 0,
    ) -> dict[str, Any]:
        scripted_llm.responder = ScriptedConversations(scripts)
        options = {"id": "file://providers/agent.py", "config": {"basePath": str(tmp_path), **(config or {})}}
        eval_id = eval_id or f"eval-{uuid.uuid4().hex[:8]}"
        return call_api(prompt, options, context(case, vars_, eval_id=eval_id, repeat=repeat))

    return run


def keys_of(typed_dict: type) -> set[str]:
    return set(typed_dict.__annotations__)


def check_contract(metadata: Mapping[str, Any]) -> None:
    """The metadata has every contract key with the contract's shape, and consistent turn numbers."""
    assert metadata[PROVIDER_MARKER_KEY] == 1
    assert set(REQUIRED_KEYS) <= set(metadata)
    assert metadata["conversation_end"] in ("done", "gave_up", "max_turns", "error")
    assert isinstance(metadata["turns"], int) and isinstance(metadata["final_reply"], str)
    assert set(metadata["agent"]) == keys_of(AgentInfo)
    assert isinstance(metadata["agent"]["name"], str) and isinstance(metadata["agent"]["model"], str)
    assert set(metadata["usage"]) == {"agent", "user"}
    for usage in metadata["usage"].values():
        assert set(usage) == keys_of(UsageRecord)
    for pr in metadata["pull_requests"]:
        assert set(pr) == keys_of(PullRequestRef) and isinstance(pr["id"], int) and isinstance(pr["url"], str)
    for call in metadata["tool_calls"]:
        assert set(call) == keys_of(ToolCallRecord)
        assert isinstance(call["name"], str) and isinstance(call["raw_arguments"], str)
        assert call["arguments"] is None or isinstance(call["arguments"], dict)
        assert isinstance(call["is_error"], bool) and isinstance(call["turn"], int)
    transcript = metadata["transcript"]
    for entry in transcript:
        assert set(entry) == keys_of(TranscriptEntry)
        assert entry["role"] in ("user", "assistant") and isinstance(entry["content"], str)
    # user, assistant, user, assistant…, numbered 1, 1, 2, 2…; a last user message may have no answer
    for index, entry in enumerate(transcript):
        assert entry["role"] == ("user" if index % 2 == 0 else "assistant")
        assert entry["turn"] == index // 2 + 1
    answered = [e for e in transcript if e["role"] == "assistant"]
    for entry in answered:
        names = [c["name"] for c in metadata["tool_calls"] if c["turn"] == entry["turn"]]
        assert entry["tool_calls"] == names
    if answered:
        assert metadata["final_reply"] == answered[-1]["content"]
    assert metadata["turns"] == len([e for e in transcript if e["role"] == "user"])


def tool_names(metadata: Mapping[str, Any]) -> list[str]:
    return [c["name"] for c in metadata["tool_calls"]]
