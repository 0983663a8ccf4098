"""Helpers for the provider tests: call ``call_api`` as Promptfoo does, check the contract."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_evals.record import END_REASONS, ERROR_KINDS, MARKER, TOOL_OUTCOMES, RunRecord
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.provider.run import call_api
from agent_evals.testing.conversations import ConversationScript, ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer

Call = Callable[..., dict[str, Any]]


def context(
    case: str, vars_: Mapping[str, Any] | None = None, *, eval_id: str = "eval-test", repeat: int = 0,
    asserts: list[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """A Promptfoo ``context`` for one test (the shape call_api gets from the worker)."""
    test: dict[str, Any] = {"description": f"{case} a test", "vars": dict(vars_ or {}), "metadata": {"id": case}}
    if asserts is not None:
        test["assert"] = asserts
    return {
        "vars": {**(vars_ or {}), "__evalId": eval_id},
        "test": test,
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
        asserts: list[Mapping[str, Any]] | None = None,
    ) -> dict[str, Any]:
        scripted_llm.responder = ScriptedConversations(scripts)
        # the kit's agent works on the portal: the spoke pack's system
        options = {"id": "file://providers/agent.py", "config": {"basePath": str(tmp_path), "pack": "spoke", **(config or {})}}
        eval_id = eval_id or f"eval-{uuid.uuid4().hex[:8]}"
        return call_api(prompt, options, context(case, vars_, eval_id=eval_id, repeat=repeat, asserts=asserts))

    return run


REQUIRED_KEYS = (
    "case_id", "agent", "user", "turns", "transcript", "tool_calls", "side_effects", "conversation_end",
    "ended_by", "error_kind", "error", "final_reply", "usage", "trace",
)
USAGE_KEYS = {"prompt_tokens", "completion_tokens", "total_tokens", "calls", "cost"}
CALL_KEYS = {"id", "name", "arguments", "raw_arguments", "outcome", "is_error", "result", "turn", "index", "duration_ms"}


def check_contract(metadata: Mapping[str, Any]) -> None:
    """The metadata is a run record (it reads back into one), with consistent turn numbers."""
    assert metadata[MARKER] == 3 and "pull_requests" not in metadata
    assert set(REQUIRED_KEYS) <= set(metadata)
    record = RunRecord.from_metadata(metadata)
    assert record.to_metadata() == {k: v for k, v in metadata.items() if k in record.to_metadata()}
    assert metadata["conversation_end"] in END_REASONS
    assert (metadata["error_kind"] in ERROR_KINDS) == (metadata["conversation_end"] == "error")
    assert isinstance(metadata["turns"], int) and isinstance(metadata["final_reply"], str)
    assert set(metadata["agent"]) == {"name", "model", "temperature", "instructions_sha256"}
    assert set(metadata["usage"]) == {"agent", "user", "judge"}
    for usage in metadata["usage"].values():
        assert set(usage) == USAGE_KEYS
    for effect in metadata["side_effects"]:
        assert set(effect) <= {"kind", "id", "url"} and isinstance(effect["id"], str) and effect["kind"] == "pull_request"
        assert effect["id"].isdigit() and isinstance(effect.get("url", ""), str)
    for index, call in enumerate(metadata["tool_calls"], start=1):
        assert set(call) - {"server"} == CALL_KEYS and call["index"] == index and call["outcome"] in TOOL_OUTCOMES
        assert isinstance(call.get("server", ""), str)  # the MCP server it went to, when it reached one
        assert isinstance(call["name"], str) and isinstance(call["raw_arguments"], str)
        assert call["arguments"] is None or isinstance(call["arguments"], dict)
    transcript = metadata["transcript"]
    for entry in transcript:
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
