"""function_call_metrics: one-to-one pairing of repeated calls, the five metrics, threshold."""

from __future__ import annotations

import pytest

from agent_evals.assertions.function_call_metrics import grade
from agent_evals.assertions.metrics import ActualCall, ExpectedCall, call_metrics, pair_calls

from ._assertion_support import call, metadata

G, C = "get_spoke", "create_spoke_pull_request"


def scores(result: dict) -> tuple[float, ...]:
    named = result["namedScores"]
    return tuple(
        round(named[key], 3)
        for key in (
            "function_name_precision",
            "function_name_recall",
            "argument_precision",
            "argument_recall",
            "reliability",
        )
    )


CASES = [
    # name, expected calls, actual calls, (name P, name R, arg P, arg R, reliability)
    ("perfect", [{"name": G, "arguments": {"name": "a"}}], [call(G, {"name": "a"})], (1, 1, 1, 1, 1)),
    (
        "numeric equivalence in arguments",
        [{"name": C, "arguments": {"n": 1}}],
        [call(C, {"n": 1.0})],
        (1, 1, 1, 1, 1),
    ),
    (
        "extra call lowers name precision",
        [{"name": G, "arguments": {"name": "a"}}],
        [call(G, {"name": "a"}), call(C, {})],
        (0.5, 1, 1, 1, 1),
    ),
    (
        "missing call lowers name recall",
        [{"name": G, "arguments": {"name": "a"}}, {"name": C, "arguments": {"x": 1}}],
        [call(G, {"name": "a"})],
        (1, 0.5, 1, 1, 0.75),
    ),
    (
        "wrong argument value",
        [{"name": G, "arguments": {"name": "a", "rev": "main"}}],
        [call(G, {"name": "b", "rev": "main"})],
        (1, 1, 0.5, 0.5, 0.75),
    ),
    (
        "an argument the case does not name is not counted against the agent",
        [{"name": G, "arguments": {"name": "a"}}],
        [call(G, {"name": "a", "rev": "main"})],
        (1, 1, 1, 1, 1),
    ),
    (
        "a wrong value of a named argument lowers precision and recall",
        [{"name": G, "arguments": {"name": "a", "rev": "main"}}],
        [call(G, {"name": "b", "rev": "main"})],
        (1, 1, 0.5, 0.5, 0.75),
    ),
    (
        "a named argument left out lowers recall, not precision",
        [{"name": G, "arguments": {"name": "a", "rev": "main"}}],
        [call(G, {"name": "a"})],
        (1, 1, 1, 0.5, 0.75),
    ),
    (
        "bool is not 1",
        [{"name": G, "arguments": {"force": 1}}],
        [call(G, {"force": True})],
        (1, 1, 0, 0, 0.5),
    ),
    # repeated calls are separate calls: two expected get_spoke, one actual
    (
        "repeated expected call",
        [{"name": G, "arguments": {"name": "a"}}, {"name": G, "arguments": {"name": "b"}}],
        [call(G, {"name": "b"})],
        (1, 0.5, 1, 1, 0.75),
    ),
    (
        "repeated actual call",
        [{"name": G, "arguments": {"name": "a"}}],
        [call(G, {"name": "b"}), call(G, {"name": "a"})],
        (0.5, 1, 1, 1, 1),
    ),
    ("no calls at all", [{"name": G, "arguments": {"name": "a"}}], [], (0, 0, 0, 0, 0)),
    ("nothing expected, nothing done", [], [], (1, 1, 1, 1, 1)),
    ("nothing expected, something done", [], [call(G, {"name": "a"})], (0, 1, 1, 1, 1)),
    ("arguments omitted", [{"name": G}], [call(G, {})], (1, 1, 1, 1, 1)),
    ("glob name", [{"name": "get_*", "arguments": {"name": "a"}}], [call(G, {"name": "a"})], (1, 1, 1, 1, 1)),
]


@pytest.mark.parametrize(
    ("expected", "actual", "want"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_metrics(expected: list, actual: list, want: tuple) -> None:
    result = grade({"expected_calls": expected, "threshold": 0}, metadata(actual))
    assert scores(result) == tuple(float(x) for x in want)
    assert result["score"] == result["namedScores"]["reliability"]


def test_pairing_prefers_best_argument_overlap_over_order() -> None:
    expected = [ExpectedCall(G, {"name": "a", "rev": "x"}), ExpectedCall(G, {"name": "b", "rev": "x"})]
    actual = [ActualCall(G, {"name": "b", "rev": "x"}, 1), ActualCall(G, {"name": "a", "rev": "x"}, 2)]
    assert [(p.expected, p.actual, p.equal) for p in pair_calls(expected, actual)] == [
        (0, 1, ("name", "rev")),
        (1, 0, ("name", "rev")),
    ]
    assert call_metrics(expected, actual).reliability == 1.0


def test_ties_go_to_the_earlier_calls() -> None:
    expected = [ExpectedCall(G, {}), ExpectedCall(G, {})]
    actual = [ActualCall(G, {}, 1), ActualCall(G, {}, 2), ActualCall(G, {}, 3)]
    metrics = call_metrics(expected, actual)
    assert [(p.expected, p.actual) for p in metrics.pairs] == [(0, 0), (1, 1)]
    assert metrics.unpaired_actual == (2,)


def test_threshold_and_reason() -> None:
    config = {
        "expected_calls": [
            {"name": G, "arguments": {"name": "a"}},
            {"name": C, "arguments": {"spoke_name": "a", "title": "t"}},
        ]
    }
    data = metadata(
        [call(G, {"name": "a"}), call("list_spokes", {}), call(C, {"spoke_name": "a", "title": "other"})]
    )
    result = grade(config, data)
    assert result["pass"] is False
    assert result["reason"] == (
        "function_call_metrics: reliability 0.83 < threshold 1.00; names P 0.67 R 1.00; arguments P 0.67 R 0.67\n"
        "  expected #1 get_spoke ↔ call 1 get_spoke: 1/1 expected arguments equal, 1 given\n"
        "  expected #2 create_spoke_pull_request ↔ call 3 create_spoke_pull_request: 1/2 expected arguments equal, "
        "2 given; differ: title\n"
        "  call 2 list_spokes: not expected"
    )
    assert grade({**config, "threshold": 0.8}, data)["pass"] is True
    assert grade({**config, "ignore": ["list_*"]}, data)["namedScores"]["function_name_precision"] == 1.0


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, "config.expected_calls is missing: give a list of {name, arguments} objects"),
        (
            {"expected_calls": {"name": G}},
            'config.expected_calls must be a list of {name, arguments} objects, got dict {"name": "get_spoke"}',
        ),
        (
            {"expected_calls": [G]},
            'config.expected_calls[0] must be an object {name, arguments}, got str "get_spoke"',
        ),
        (
            {"expected_calls": [{"tool": G}]},
            "config.expected_calls[0] has unknown key(s) 'tool'; allowed: name, arguments",
        ),
        (
            {"expected_calls": [{"name": G, "arguments": [1]}]},
            "config.expected_calls[0].arguments must be an object, got list [1]",
        ),
        (
            {"expected_calls": [{"arguments": {}}]},
            "config.expected_calls[0].name must be a tool name or glob, got NoneType null",
        ),
        (
            {"expected_calls": [], "threshold": 1.5},
            "config.threshold must be a number from 0.0 to 1.0, got float 1.5",
        ),
        (
            {"expected_calls": [], "threshold": True},
            "config.threshold must be a number from 0.0 to 1.0, got bool true",
        ),
    ],
)
def test_malformed_config(config: dict, message: str) -> None:
    assert grade(config, metadata())["reason"] == f"function_call_metrics: invalid config: {message}"
