"""tool_sequence: every mode, passing and failing cases side by side, reasons included."""

from __future__ import annotations

import pytest

from agent_evals.assertions.tool_sequence import grade

from ._assertion_support import call, metadata

G, V, C, S = "get_spoke", "validate_spoke_config", "create_spoke_pull_request", "get_spoke_schema"


def run(*names: str) -> dict:
    return metadata([call(name, {}, turn=1) for name in names])


CASES = [
    # mode, expected, actual, passes, reason fragment
    (
        "strict",
        [G, V, C],
        [G, V, C],
        True,
        "strict: expected get_spoke → validate_spoke_config → create_spoke_pull_request",
    ),
    (
        "strict",
        [G, V, C],
        [G, C, V],
        False,
        "first difference at position 2: expected validate_spoke_config, got create_spoke_pull_request",
    ),  # wrong order
    (
        "strict",
        [G, C],
        [G, S, C],
        False,
        "first difference at position 2: expected create_spoke_pull_request, got get_spoke_schema",
    ),  # extra call between
    (
        "strict",
        [G, C],
        [G, C, C],
        False,
        "unexpected create_spoke_pull_request from position 3 (expected only 2 call(s))",
    ),  # repeated call
    (
        "strict",
        [G, V, C],
        [G, V],
        False,
        "missing create_spoke_pull_request at position 3 (the agent stopped after 2 call(s))",
    ),
    ("strict", [], [], True, "expected (no tool calls); actual (no tool calls); matches"),
    ("in_order", [G, V, C], [S, G, V, S, C], True, "matches"),  # others between are fine
    (
        "in_order",
        [G, V, C],
        [S, G, C],
        False,
        (
            "in_order: expected get_spoke → validate_spoke_config → create_spoke_pull_request; "
            "actual get_spoke_schema, get_spoke, create_spoke_pull_request; "
            "missing validate_spoke_config after get_spoke (position 2)"
        ),
    ),
    (
        "in_order",
        [G, V, C],
        [G, C, V],
        False,
        "missing create_spoke_pull_request after validate_spoke_config (position 3; it was called earlier, at call 2)",
    ),  # wrong order
    (
        "in_order",
        [G, G],
        [G],
        False,
        "missing get_spoke after get_spoke (position 2)",
    ),  # repeated call expected twice
    (
        "in_order",
        [G, C],
        [],
        False,
        "actual (no tool calls); missing get_spoke at the start (position 1); missing create_spoke_pull_request at the start (position 2)",
    ),
    ("in_order", ["get_*", C], [S, C], True, "matches"),  # glob
    (
        "unordered",
        [G, V, C],
        [C, G, V],
        True,
        "unordered: expected get_spoke, validate_spoke_config, create_spoke_pull_request",
    ),
    (
        "unordered",
        [G, V],
        [V, G, G],
        False,
        "unexpected get_spoke (call 3; more than the 1 expected)",
    ),  # repeated call
    ("unordered", [G, V, C], [V, G], False, "missing create_spoke_pull_request"),
    (
        "unordered",
        [G, V],
        [G, V, S],
        False,
        "unexpected get_spoke_schema (call 3; not expected)",
    ),  # extra call
    ("unordered", ["get_*", G], [G, S], True, "matches"),  # overlapping globs paired well
    ("superset", [G, C], [S, C, G, V], True, "matches"),
    ("superset", [G, G, C], [G, C], False, "missing get_spoke"),  # count matters
    ("superset", [G, C], [G], False, "missing create_spoke_pull_request"),
    ("subset", [G, V, C], [G, C], True, "matches"),
    (
        "subset",
        [G, C],
        [G, C, C],
        False,
        "unexpected create_spoke_pull_request (call 3; more than the 1 expected)",
    ),
    ("subset", [G, C], [G, S], False, "unexpected get_spoke_schema (call 2; not expected)"),
    ("subset", [G], [], True, "matches"),
]


@pytest.mark.parametrize(("mode", "expected", "actual", "passes", "fragment"), CASES)
def test_modes(mode: str, expected: list[str], actual: list[str], passes: bool, fragment: str) -> None:
    result = grade({"expected": expected, "mode": mode}, run(*actual))
    assert result["pass"] is passes, result["reason"]
    assert result["score"] == (1.0 if passes else 0.0)
    assert fragment in result["reason"]
    assert result["reason"].startswith(f"tool_sequence {mode}: ")


def test_in_order_is_the_default_mode() -> None:
    result = grade({"expected": [G, C]}, run(G, S, C))
    assert result["pass"] is True
    assert result["reason"].startswith("tool_sequence in_order: ")


def test_ignore_drops_calls_before_matching() -> None:
    result = grade(
        {"expected": [G, V, C], "mode": "strict", "ignore": ["get_spoke_*", "list_*"]},
        run(S, G, "list_spokes", V, S, C),
    )
    assert result["pass"] is True
    assert result["reason"] == (
        "tool_sequence strict: expected get_spoke → validate_spoke_config → create_spoke_pull_request; "
        "actual get_spoke, validate_spoke_config, create_spoke_pull_request "
        "(ignored: get_spoke_schema ×2, list_spokes); matches"
    )


def test_errored_calls_still_count() -> None:
    data = metadata([call(G), call(C, is_error=True), call(C)])
    assert grade({"expected": [G, C], "mode": "strict"}, data)["pass"] is False


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (None, "config.expected is missing: give a list of tool names or globs"),
        ({}, "config.expected is missing"),
        (
            {"expected": "get_spoke"},
            'config.expected must be a list of tool names or globs, got str "get_spoke"',
        ),
        (
            {"expected": [G, 3]},
            'config.expected must be a list of tool names or globs, got list ["get_spoke", 3]',
        ),
        (
            {"expected": [G], "mode": "loose"},
            'config.mode is "loose", which is not allowed; allowed: strict, in_order, unordered, superset, subset',
        ),
        ({"expected": [G], "ignore": "x"}, "config.ignore must be a list of tool names or globs"),
        (
            {"expected": [G], "expcted": [G]},
            "unknown config key 'expcted'; allowed keys: expected, mode, ignore",
        ),
        (["get_spoke"], "config must be a mapping of settings (expected, mode, ignore), got list"),
    ],
)
def test_malformed_config(config: object, message: str) -> None:
    result = grade(config, run(G))
    assert result["pass"] is False
    assert result["reason"].startswith("tool_sequence: invalid config: ")
    assert message in result["reason"]
