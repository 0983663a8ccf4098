"""Shared plumbing: metadata from the Promptfoo context, foreign metadata, the thin files, light imports."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_evals.assertions import grade_from_context
from agent_evals.assertions._context import metadata_from_context
from agent_evals.assertions.tool_sequence import grade as tool_sequence

from ._assertion_support import call, metadata

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
    (
        {"agent_evals": 2, "tool_calls": []},
        "metadata contract version 2 is not supported (these assertions read version 1)",
    ),
    ({"agent_evals": 1}, "the provider metadata lacks the contract key(s) tool_calls"),
    ({"agent_evals": 1, "tool_calls": "get_spoke"}, "metadata 'tool_calls' must be a list, got str"),
    (
        {"agent_evals": 1, "tool_calls": [{"arguments": {}}]},
        "metadata tool_calls[0] is not a tool call record with a 'name'",
    ),
]


@pytest.mark.parametrize(("data", "reason"), FOREIGN)
def test_foreign_or_broken_metadata(data: object, reason: str) -> None:
    result = tool_sequence({"expected": []}, data)
    assert result == {"pass": False, "score": 0.0, "reason": f"tool_sequence: {reason}"}


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
        assert len(lines) <= 16, name
        assert any(line.startswith(f"from agent_evals.assertions.{name} import grade") for line in code), name


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
