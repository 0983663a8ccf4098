"""Shared plumbing: metadata from the Promptfoo context, foreign metadata, the thin files, light imports."""

from __future__ import annotations

from agent_evals.assertions.registry import check_module

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_evals.assertions import grade_from_context
from agent_evals.assertions._context import metadata_from_context
from agent_evals.assertions.tool_sequence import grade as tool_sequence
from agent_evals.record import RunRecord, ToolCall

from ._assertion_support import call, metadata, portal_pull_request, snapshot

ROOT = Path(__file__).resolve().parents[2]
ASSERTIONS = [
    "tool_sequence",
    "tool_not_executed",
    "argument_match",
    "input_diff",
    "spoke_json_valid",
    "pull_request",
    "function_call_metrics",
    "conversation",
]
MINIMAL_CONFIG = {
    "tool_sequence": {"expected": []},
    "tool_not_executed": {"tools": ["x"]},
    "argument_match": {"tool": "x*", "args": {}},
    "input_diff": {"source": {}, "expected_changes": {}},
    "spoke_json_valid": {},
    "pull_request": {"expect": "none"},
    "function_call_metrics": {"expected_calls": []},
    "conversation": {},
}


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"assertion_{name}", ROOT / "assertions" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_provider_response_metadata_first_then_context_metadata() -> None:
    ours = metadata([call("a")])
    assert metadata_from_context({"providerResponse": {"metadata": ours}}) is ours
    assert metadata_from_context({"providerResponse": {"output": "x"}, "metadata": ours}) is ours
    assert metadata_from_context({"providerResponse": {"metadata": {"other": 1}}, "metadata": ours}) is ours
    assert metadata_from_context({"providerResponse": {"metadata": {"other": 1}}}) == {"other": 1}
    assert metadata_from_context("nonsense") is None


UNSUPPORTED = (
    "is not supported (this kit reads versions 2, 3); re-run the case, or upgrade cassettes with "
    "`npx agent-evals cassettes upgrade DIR`"
)
FOREIGN = [
    # metadata, reason (after the assertion's name)
    (
        None,
        (
            "no provider metadata: the agent_evals provider (providers/agent.py) returns the conversation in its "
            "response metadata; is this suite using another provider?"
        ),
    ),
    (
        {"messages": [], "sessionId": "s"},
        "the metadata is not from the agent_evals provider (no 'agent_evals' marker; keys found: messages, sessionId)",
    ),
    ({"agent_evals": 1, "tool_calls": []}, f"run record version 1 {UNSUPPORTED}"),
    ({"agent_evals": "2", "tool_calls": []}, f"run record version '2' {UNSUPPORTED}"),
    ({"agent_evals": 2, "tool_calls": "get_spoke"}, "metadata 'tool_calls' must be a list, got str"),
    ({"agent_evals": 2, "tool_calls": [{"arguments": {}}]}, "metadata tool_calls[0] has no 'name'"),
    (
        {"agent_evals": 2, "tool_calls": [{"name": "get_spoke", "outcome": "failed"}]},
        (
            "metadata tool_calls[0] (get_spoke) has outcome 'failed', which this kit does not know "
            "(known: ok, tool_error, refused, invalid_arguments)"
        ),
    ),
    (
        {**metadata([call("get_spoke"), call("delete_spoke", turn=2)], replies=["a", "b"]), "transcript": []},
        "metadata tool_calls[0] (get_spoke) belongs to turn 1, which the transcript does not have",
    ),
    (
        {**metadata([call("delete_spoke")]), "tool_calls": [{**call("delete_spoke"), "turn": None}]},
        "metadata tool_calls[0] (delete_spoke) belongs to turn 0, which the transcript does not have",
    ),
    (
        {"agent_evals": 2, "transcript": [{"role": "system", "content": "x"}]},
        "metadata 'transcript' must be a list of {role: user|assistant, content, turn} entries",
    ),
    (
        {"agent_evals": 2, "pull_requests": [{"url": "http://x/repos/spokes/pullrequest/1"}]},
        "metadata 'pull_requests' entries must be {id, url}, got {'url': 'http://x/repos/spokes/pullrequest/1'}",
    ),
    (
        {"agent_evals": 2, "conversation_end": "finished"},
        "metadata 'conversation_end' is 'finished'; known: done, gave_up, max_turns, max_tool_rounds, max_tokens, error",
    ),
    (
        {"agent_evals": 2, "snapshot": {"pull_requests": []}},
        "metadata 'snapshot' of a version-2 record must be an object with a 'portal_url'",
    ),
    (
        {"agent_evals": 3, "snapshot": {"portal_url": "http://x", "pull_requests": []}},
        "metadata 'snapshot' has key(s) portal_url, pull_requests, which record version 3 does not know: "
        "a snapshot is {read_from, resources} (a pack keeps its end state in 'resources')",
    ),
    (
        {"agent_evals": 3, "snapshot": {"read_from": 3}},
        "metadata 'snapshot.read_from' must be text, got int",
    ),
]


@pytest.mark.parametrize(("data", "reason"), FOREIGN)
def test_foreign_or_broken_metadata(data: object, reason: str) -> None:
    result = tool_sequence({"expected": []}, data)
    assert result == {"pass": False, "score": 0.0, "reason": f"tool_sequence: {reason}"}


def version_1_metadata() -> dict:
    """What the kit wrote before the run record (contract version 1): refused, never misread."""
    return {
        "agent_evals": 1,
        "tool_calls": [{"name": "get_spoke", "arguments": {}, "raw_arguments": "{}", "result": {}, "is_error": False, "turn": 1}],
        "transcript": [{"role": "user", "content": "hi", "turn": 1, "tool_calls": []}],
        "pull_requests": [],
        "turns": 1,
        "conversation_end": "done",
        "final_reply": "ok",
        "agent": {"name": "a", "model": "m", "temperature": None, "instructions_sha256": ""},
        "usage": {"agent": {}, "user": {}},
    }


@pytest.mark.parametrize("name", ASSERTIONS)
def test_every_assertion_refuses_record_version_1(name: str) -> None:
    context = {"config": MINIMAL_CONFIG[name], "providerResponse": {"metadata": version_1_metadata()}}
    result = load(name).get_assert("ok", context)
    assert result == {"pass": False, "score": 0.0, "reason": f"{name}: run record version 1 {UNSUPPORTED}"}


SNAPSHOT_CONFIG = {
    "input_diff": {"source": "billing", "expected_changes": {}},
    "spoke_json_valid": {"check_pull_request": False},
    "pull_request": {},
}


@pytest.mark.parametrize("name", sorted(SNAPSHOT_CONFIG))
def test_assertions_reading_the_end_state_need_a_snapshot(name: str) -> None:
    data = metadata(
        [call("create_spoke_pull_request", {"config": {"name": "billing"}})],
        replies=["Created http://127.0.0.1:8400/repos/spokes/pullrequest/1"],
        pull_requests=[1],
    )
    result = load(name).get_assert("", {"config": SNAPSHOT_CONFIG[name], "providerResponse": {"metadata": data}})
    assert result == {
        "pass": False,
        "score": 0.0,
        "reason": (
            f"{name}: the metadata has no end-state snapshot ('snapshot'): the provider takes one when the "
            "conversation ends; this row comes from another provider or an older kit"
        ),
    }
    data["snapshot"] = snapshot(
        pull_requests=[portal_pull_request(1)], schema={"type": "object"}, spokes={"billing": {"name": "billing"}}
    )
    result = load(name).get_assert("", {"config": SNAPSHOT_CONFIG[name], "providerResponse": {"metadata": data}})
    assert result["pass"] is True, result["reason"]


def test_support_builds_what_the_run_record_writes() -> None:
    """The helpers' metadata is the record's own form: reading it back and writing it again changes nothing."""
    data = metadata(
        [call("get_spoke", {"name": "a"}), call("create_spoke_pull_request", {"config": {}}, turn=2, is_error=True)],
        replies=["Shall I?", "Done."],
        pull_requests=[4],
        snapshot=snapshot(pull_requests=[portal_pull_request(4)], spokes={"a": {}, "b": None}),
    )
    record = RunRecord.from_metadata(data)
    assert record.to_metadata() == data
    first, second = record.tool_calls
    assert (first.index, first.turn, first.outcome, first.is_error) == (1, 1, "ok", False)
    assert (second.index, second.turn, second.outcome, second.is_error) == (2, 2, "tool_error", True)
    assert second.where() == "call 2, turn 2"
    assert [ToolCall.from_dict(item).to_dict() for item in data["tool_calls"]] == data["tool_calls"]
    assert record.final_reply == "Done." and record.user_messages_sent == 2
    assert record.snapshot is not None and record.snapshot.resources["pull_requests"][0]["status"] == "active"
    errored = RunRecord.from_metadata(metadata(end="error", error_kind="system", error="down"))
    assert errored.end is not None and errored.end.describe() == "error (system): down"


@pytest.mark.parametrize("name", ASSERTIONS)
def test_every_assertion_reports_foreign_metadata(name: str) -> None:
    context = {
        "config": MINIMAL_CONFIG[name],
        "providerResponse": {"output": "hi", "metadata": {"messages": []}},
        "metadata": {"messages": []},
    }
    result = load(name).get_assert("hi", context)
    assert result["pass"] is False
    assert result["reason"] == (
        f"{name}: the metadata is not from the agent_evals provider (no 'agent_evals' marker; keys found: messages)"
    )


@pytest.mark.parametrize("name", ASSERTIONS)
def test_every_assertion_rejects_a_non_mapping_config(name: str) -> None:
    result = load(name).get_assert("", {"config": "oops", "providerResponse": {"metadata": metadata()}})
    assert result["pass"] is False
    assert result["reason"].startswith(f"{name}: invalid config: config must be a mapping of settings (")
    assert result["reason"].endswith('got str "oops"')


@pytest.mark.parametrize(
    "name",
    [
        "tool_sequence",
        "tool_not_executed",
        "argument_match",
        "input_diff",
        "function_call_metrics",
        "conversation",
    ],
)
def test_every_offline_assertion_passes_its_minimal_config(name: str) -> None:
    calls = [call("create_spoke_pull_request", {"config": {}})] if name == "input_diff" else []
    calls += [call("xy", {})] if name == "argument_match" else []
    context = {
        "config": MINIMAL_CONFIG[name],
        "providerResponse": {"metadata": metadata(calls, replies=["ok"])},
    }
    result = load(name).get_assert("", context)
    assert result["pass"] is True, result["reason"]
    json.dumps(result)  # Promptfoo reads the result as JSON


def test_grade_from_context_passes_config_and_metadata() -> None:
    context = {
        "config": {"expected": ["a"], "mode": "strict"},
        "providerResponse": {"metadata": metadata([call("a")])},
    }
    assert grade_from_context(tool_sequence, context)["pass"] is True


def test_thin_files_are_thin() -> None:
    for name in ASSERTIONS:
        lines = (ROOT / "assertions" / f"{name}.py").read_text().splitlines()
        code = [
            line
            for line in lines
            if line.strip() and not line.startswith(('"""', " ", "#")) and '"""' not in line
        ]
        assert len(lines) <= 22, name  # get_assert, and get_assert_not (the not- form)
        module = check_module(name).__name__
        assert any(line.startswith(f"from {module} import grade") for line in code), name


def test_assertion_imports_stay_light() -> None:
    """No heavy package at import time; jsonschema and urllib.request only where used."""
    heavy = [
        "openai",
        "mcp",
        "fastapi",
        "uvicorn",
        "httpx",
        "pydantic",
        "jsonschema",
        "urllib.request",
        "yaml",
    ]
    code = (
        "import importlib.util, sys, json\n"
        f"for name in {ASSERTIONS!r}:\n"
        f"    spec = importlib.util.spec_from_file_location(name, {str(ROOT / 'assertions')!r} + '/' + name + '.py')\n"
        "    spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        f"print(json.dumps([m for m in {heavy!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
