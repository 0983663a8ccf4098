"""One Promptfoo row to a Row: outcome, case id and where it came from, error kind, checks,
not-graded entries, named scores of weight 0."""

from __future__ import annotations

from typing import Any

import pytest

from agent_evals.report.rows import NotPromptfooRow, Row, row_from_promptfoo
from agent_evals.testing.promptfoo_results import result_row


def _row(raw: dict[str, Any]) -> Row:
    return row_from_promptfoo(raw, "eval-1")


def test_a_passing_row() -> None:
    row = _row(result_row("C01", 3, "pass", group="copy", priority="smoke", tool_calls=("a", "b", "c")))
    assert (row.case_id, row.id_source, row.outcome, row.test_idx) == ("C01", "record", "pass", 3)
    assert (row.group, row.priority, row.provider, row.end, row.turns, row.tool_calls) == (
        "copy",
        "smoke",
        "agent",
        "done",
        2,
        3,
    )
    assert row.usage["agent"].calls == 3 and row.usage["judge"].calls == 0
    assert row.agent is not None and row.agent.model == "agent-model"
    assert row.first_failure is None and row.error_kind is None


def test_a_failing_row_names_its_first_failing_check_in_order() -> None:
    raw = result_row(
        "C01",
        0,
        "fail",
        passing=["pull_request"],
        failing=[("tool_sequence", "ts: x"), ("input_diff", "d: y")],
    )
    row = _row(raw)
    assert row.outcome == "fail"
    assert row.first_failure is not None and (row.first_failure.metric, row.first_failure.reason) == (
        "tool_sequence",
        "ts: x",
    )
    assert [c.metric for c in row.failures] == ["tool_sequence", "input_diff"]


def test_not_graded_entries_are_neither_failures_nor_checks() -> None:
    raw = result_row("Q01", 0, "pass", not_graded=["llm-rubric (rubric): no grader model"])
    raw["gradingResult"]["componentResults"].append(
        {"pass": False, "score": 0, "reason": "NOT GRADED: no grader", "assertion": {"type": "llm-rubric"}}
    )
    row = _row(raw)
    assert row.not_graded == (
        "llm-rubric (rubric): no grader model",
    )  # the metadata list is the authoritative one
    assert all(not c.reason.startswith("NOT GRADED") for c in row.checks)


def test_not_graded_entries_count_without_the_metadata_list() -> None:
    raw = result_row("Q01", 0, "pass")
    raw["gradingResult"]["componentResults"].append(
        {
            "pass": True,
            "score": 0,
            "reason": "NOT GRADED: no grader model configured",
            "assertion": {"type": "llm-rubric"},
        }
    )
    assert _row(raw).not_graded == ("llm-rubric: NOT GRADED: no grader model configured",)


def test_named_scores_of_weight_zero_are_left_out() -> None:
    raw = result_row("Q01", 0, "pass", named_scores={"key_facts": 1.0, "rubric": 0.0})
    raw["gradingResult"]["namedScoreWeights"] = {"key_facts": 1, "rubric": 0}
    assert _row(raw).named_scores == {"key_facts": 1.0}


def test_a_version_2_row_reports_its_portal_error_as_a_system_error() -> None:
    """Rows stored before record version 3 (Promptfoo's database keeps them) report with today's kinds."""
    raw = result_row("C01", 0, "error", error_kind="system")
    metadata = raw["response"]["metadata"]
    metadata.update({"agent_evals": 2, "error_kind": "portal", "pull_requests": [{"id": 3, "url": "http://p/3"}],
                     "snapshot": {"portal_url": "http://p", "pull_requests": [], "resources": {}}})
    del metadata["side_effects"]
    row = _row(raw)
    assert row.outcome == "error" and row.error_kind == "system"
    metadata["error_kind"] = "model"
    assert _row(raw).error_kind == "model"  # other kinds are kept


@pytest.mark.parametrize(
    ("record_kind", "error", "expected"),
    [
        ("system", "[system] the portal is not reachable", "system"),  # the record's error_kind
        ("portal", "the portal is not reachable", "unknown"),  # not a kind of a version-3 record
        (None, "[portal] the portal is not reachable", "system"),  # an older name, read as today's
        (None, "[replay] the cassette is stale", "replay"),  # first in the message
        (None, "[nonsense] what", "unknown"),  # not a kit kind
        (None, "Worker shutting down", "interrupted"),  # Promptfoo's in-flight row after Ctrl-C
        (None, "Python error: boom", "unknown"),
    ],
)
def test_error_rows_and_their_kind(record_kind: str | None, error: str, expected: str) -> None:
    raw = result_row("C01", 0, "error", record=record_kind is not None, error_kind=record_kind or "model")
    raw["error"] = error
    row = _row(raw)
    assert row.outcome == "error" and row.error_kind == expected
    assert row.first_failure is None and row.checks == ()


@pytest.mark.parametrize(
    ("description", "test_id", "record", "expected"),
    [
        ("C07 copy a spoke", True, True, ("C07", "record")),
        ("C07 copy a spoke", True, False, ("C07", "test")),
        ("C07 copy a spoke", False, False, ("C07", "description_id")),
        ("copy a spoke", False, False, ("copy a spoke", "description")),
        ("", False, False, ("test5", "index")),
    ],
)
def test_case_id_falls_back_to_the_description(
    description: str, test_id: bool, record: bool, expected: tuple[str, str]
) -> None:
    raw = result_row("C07", 5, "pass", description=description, test_id=test_id, record=record)
    row = _row(raw)
    assert (row.case_id, row.id_source) == expected


def test_the_providers_index_fallback_is_not_a_case_id() -> None:
    """Without an id the provider records ``test<testIdx>``, which differs per repeat."""
    raw = result_row("test9", 9, "pass", description="copy a spoke", test_id=False)
    assert (_row(raw).case_id, _row(raw).id_source) == ("copy a spoke", "description")


def test_a_row_that_is_not_promptfoos_is_refused() -> None:
    with pytest.raises(NotPromptfooRow):
        _row({"output": "x"})
