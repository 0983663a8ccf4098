"""The reference-free checks a live policy uses: tool_order, tool_errors, repeated_calls (each with the
cases that must fail, and the whole reason)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_evals.assertions import repeated_calls, tool_errors, tool_order
from agent_evals.assertions._config import ConfigError

from ._assertion_support import call, metadata

RULE = {"rules": [{"before": "validate_*", "then": "create_pull_request"}]}

ORDER = [
    ([call("validate_config"), call("create_pull_request")], True,
     "tool_order: every rule holds (validate_* before create_pull_request)"),
    ([call("get_item")], True, "tool_order: every rule holds (validate_* before create_pull_request)"),  # never opened
    ([call("create_pull_request"), call("validate_config")], False,
     "tool_order: create_pull_request at call 1 (turn 1) came before a successful validate_* "
     "(rules: validate_* before create_pull_request)"),
    # a validation that failed does not count
    ([call("validate_config", is_error=True), call("create_pull_request", turn=2)], False,
     "tool_order: create_pull_request at call 2 (turn 2) came before a successful validate_* "
     "(rules: validate_* before create_pull_request)"),
]


@pytest.mark.parametrize(("calls", "passes", "reason"), ORDER)
def test_tool_order(calls: list[dict[str, Any]], passes: bool, reason: str) -> None:
    result = tool_order.grade(RULE, metadata(calls))
    assert (result["pass"], result["reason"]) == (passes, reason)


ERRORS = [
    ({}, [], True, 1.0, "tool_errors: no tool calls"),
    ({}, [call("a"), call("b")], True, 1.0, "tool_errors: all 2 tool call(s) succeeded"),
    ({}, [call("a"), call("a", is_error=True)], False, 0.5,
     "tool_errors: 1 of 2 tool call(s) failed (50% > 0%): a; a at call 2 (tool_error)"),
    ({"max_rate": 0.5}, [call("a"), call("a", outcome="refused")], True, 0.5,
     "tool_errors: 1 of 2 tool call(s) failed (50% <= 50%): a; a at call 2 (refused)"),
    ({"outcomes": ["tool_error"]}, [call("a"), call("a", outcome="refused")], True, 1.0,
     "tool_errors: all 2 tool call(s) succeeded"),
]


@pytest.mark.parametrize(("config", "calls", "passes", "score", "reason"), ERRORS)
def test_tool_errors(config: dict[str, Any], calls: list[dict[str, Any]], passes: bool, score: float, reason: str) -> None:
    result = tool_errors.grade(config, metadata(calls))
    assert (result["pass"], result["score"], result["reason"]) == (passes, score, reason)


REPEATS = [
    ({}, [call("get", {"id": 1}), call("get", {"id": 1})], True,
     "repeated_calls: no call repeated more than 2 time(s) (2 call(s))"),
    ({}, [call("get", {"id": 1}), call("get", {"id": 2}), call("get", {"id": 1}), call("get", {"id": 1})], False,
     'repeated_calls: called again and again with the same arguments: get({"id": 1}) ×3 (at most 2 allowed)'),
    ({"ignore": ["get"]}, [call("get", {"id": 1})] * 3, True,
     "repeated_calls: no call repeated more than 2 time(s) (0 call(s))"),
    ({"max_repeats": 1}, [call("get", {"b": 1, "a": 2}), call("get", {"a": 2, "b": 1})], False,
     'repeated_calls: called again and again with the same arguments: get({"a": 2, "b": 1}) ×2 (at most 1 allowed)'),
]


@pytest.mark.parametrize(("config", "calls", "passes", "reason"), REPEATS)
def test_repeated_calls(config: dict[str, Any], calls: list[dict[str, Any]], passes: bool, reason: str) -> None:
    result = repeated_calls.grade(config, metadata(calls))
    assert (result["pass"], result["reason"]) == (passes, reason)


@pytest.mark.parametrize(
    ("module", "config", "message"),
    [
        (tool_order, {}, "config.rules is missing"),
        (tool_order, {"rules": [{"before": "a"}]}, "config.rules[0] must be {before: <tool>, then: <tool>}"),
        (tool_errors, {"max_rate": 2}, "config.max_rate"),
        (tool_errors, {"outcomes": ["ok"]}, "config.outcomes has 'ok', which is not allowed; allowed: tool_error, refused"),
        (repeated_calls, {"max_repeats": 0}, "config.max_repeats must be an integer >= 1"),
        (repeated_calls, {"max_repeat": 3}, "unknown config key 'max_repeat'"),
    ],
)
def test_bad_configs_are_named(module: Any, config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")):
        module.parse_config(config)
