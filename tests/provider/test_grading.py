"""The kit's checks graded once in the worker: one result per check, a check that raises fails
with its message while the others still report, thresholds as Promptfoo applies them."""

from __future__ import annotations

import types

import pytest

from agent_evals.assertions.registry import kit_checks
from agent_evals.provider import grading
from agent_evals.record import End, RunRecord, ToolCall, Turn

CALLS = tuple(
    ToolCall.request(f"c{i}", "get_item", '{"name": "a"}').with_outcome("ok", {"name": "a"}, 1.0).placed(turn=1, index=i)
    for i in (1, 2)
)
METADATA = RunRecord(case_id="T01", turns=[Turn("hi", "The item is a.", CALLS)], end=End("done")).to_metadata()
ASSERTS = [
    {"type": "python", "value": "file://../../assertions/tool_sequence.py", "metric": "order",
     "config": {"expected": ["get_item"]}},
    {"type": "python", "value": "file://../../assertions/reply_contains.py", "metric": "facts",
     "config": {"all": ["item is a", "never said"]}},
    {"type": "python", "value": "file://../../assertions/tool_not_executed.py", "metric": "forbidden",
     "config": {"tools": ["delete_*"]}},
    {"type": "contains", "value": "a"},  # Promptfoo's own: not the kit's
]


def test_one_result_per_check_in_order_with_its_metric() -> None:
    results = grading.grade_checks(kit_checks(ASSERTS), ASSERTS, METADATA)
    assert [(r["name"], r["metric"], r["position"]) for r in results] == [
        ("tool_sequence", "order", 0), ("reply_contains", "facts", 1), ("tool_not_executed", "forbidden", 2)]
    assert [r["pass"] for r in results] == [True, False, True]
    assert results[1]["score"] == 0.5 and "missing 'never said'" in results[1]["reason"]


def test_a_threshold_above_the_score_fails_the_check() -> None:
    convergence = {"type": "python", "value": "file://../../assertions/conversation.py", "metric": "conversation",
                   "config": {"expected_steps": 1}}  # 1 expected step, 2 calls: convergence 0.5, a pass
    (plain,) = grading.grade_checks(kit_checks([convergence]), [convergence], METADATA)
    assert plain["pass"] is True and plain["score"] == 0.5
    strict = dict(convergence, threshold=0.9)
    (result,) = grading.grade_checks(kit_checks([strict]), [strict], METADATA)
    assert result["pass"] is False and result["score"] == 0.5


def test_a_check_that_raises_fails_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    real = grading.check_module

    def broken(name: str, pack: object = None) -> types.ModuleType:
        if name != "reply_contains":
            return real(name)
        module = types.ModuleType("broken")
        module.grade = lambda config, metadata: 1 / 0  # type: ignore[attr-defined]
        return module

    monkeypatch.setattr(grading, "check_module", broken)
    results = grading.grade_checks(kit_checks(ASSERTS), ASSERTS, METADATA)
    assert [r["pass"] for r in results] == [True, False, True]
    assert results[1]["reason"] == "reply_contains: the check raised ZeroDivisionError: division by zero"
    assert results[0]["reason"].startswith("tool_sequence") and results[2]["reason"].startswith("tool_not_executed")
    assert results[1]["score"] == 0.0 and results[1]["metric"] == "facts"
