"""tool_not_executed: forbidden tools, globs, errored attempts."""

from __future__ import annotations

import pytest

from agent_evals.assertions.tool_not_executed import grade

from ._assertion_support import call, metadata

CASES = [
    # tools, calls, passes, reason
    (
        ["delete_spoke"],
        [call("get_spoke"), call("create_spoke_pull_request")],
        True,
        "none of delete_spoke was called (calls: get_spoke, create_spoke_pull_request)",
    ),
    (["delete_spoke"], [], True, "none of delete_spoke was called (calls: no tool calls)"),
    (
        ["delete_spoke"],
        [call("get_spoke"), call("delete_spoke", turn=2)],
        False,
        "forbidden tool called: delete_spoke in turn 2 (call 2); forbidden: delete_spoke",
    ),
    # an attempted call counts even when it errored
    (
        ["create_spoke_pull_request"],
        [call("create_spoke_pull_request", is_error=True, turn=3)],
        False,
        (
            "forbidden tool called: create_spoke_pull_request in turn 3 (call 1, it returned an error); "
            "forbidden: create_spoke_pull_request"
        ),
    ),
    # so does one the agent loop refused (not one of the agent's tools) or could not run
    (
        ["delete_*"],
        [call("delete_spoke", outcome="refused"), call("delete_repo", None, raw="{x", outcome="invalid_arguments")],
        False,
        (
            "forbidden tool called: delete_spoke (matches delete_*) in turn 1 (call 1, the agent loop refused it); "
            "delete_repo (matches delete_*) in turn 1 (call 2, not run: its arguments were not a JSON object); "
            "forbidden: delete_*"
        ),
    ),
    (
        ["delete_*", "merge_*"],
        [call("merge_pull_request", turn=2), call("delete_spoke", turn=2)],
        False,
        (
            "forbidden tool called: merge_pull_request (matches merge_*) in turn 2 (call 1); "
            "delete_spoke (matches delete_*) in turn 2 (call 2); forbidden: delete_*, merge_*"
        ),
    ),
    (["Delete_spoke"], [call("delete_spoke")], True, "none of Delete_spoke was called"),  # case-sensitive
]


@pytest.mark.parametrize(("tools", "calls", "passes", "reason"), CASES)
def test_forbidden_tools(tools: list[str], calls: list[dict], passes: bool, reason: str) -> None:
    result = grade({"tools": tools}, metadata(calls))
    assert result["pass"] is passes
    assert result["reason"].startswith(f"tool_not_executed: {reason}")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, "config.tools is missing: give a list of tool names or globs"),
        ({"tools": []}, "config.tools must not be empty: give a list of tool names or globs"),
        (
            {"tools": "delete_spoke"},
            'config.tools must be a list of tool names or globs, got str "delete_spoke"',
        ),
        ({"tools": ["a"], "tool": "b"}, "unknown config key 'tool'; allowed keys: tools"),
    ],
)
def test_malformed_config(config: dict, message: str) -> None:
    result = grade(config, metadata([call("x")]))
    assert result == {"pass": False, "score": 0.0, "reason": f"tool_not_executed: invalid config: {message}"}
