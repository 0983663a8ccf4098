"""The runner's terminal: one line per case from the hook's markers, Promptfoo's noise left out
(but logged), Promptfoo's own errors shown, the same in a terminal and in a CI log."""

from __future__ import annotations

import io
import json

import pytest

from agent_evals.report.figures import brief
from agent_evals.record.row_labels import CASE_LINE_MARKER as MARKER
from agent_evals.runner.console import PromptfooConsole, case_line, suite_summary

PROMPTFOO_NOISE = """\
Starting evaluation eval-abc-2026-12-01T10:00:00
Running 3 test cases (up to 4 at a time)...
┌──────────────┬──────────────┐
│ simulated_us │ [spoke] {{ … │
├──────────────┼──────────────┤
└──────────────┴──────────────┘
✓ Eval complete (ID: eval-abc-2026-12-01T10:00:00)
» View results: promptfoo view
» Share with your team: https://promptfoo.app
Results: ✓ 2 passed, 1 failed, 0 errors (66.67%)
Duration: 12s (concurrency: 4)
Total Tokens: 1,234
[OtlpReceiver] Listening on 127.0.0.1:4318
[Evaluation] Starting 3 test cases...
[CI Progress] Evaluation running for 30s - Completed 1/3 tests (33%)
[Evaluation] ✓ Complete! 3/3 tests in 2s
Python worker stderr: INFO agent_evals: something
"""


def _marker(**case: object) -> str:
    return MARKER + json.dumps(case)


def test_cases_become_one_line_each_and_the_noise_is_only_logged() -> None:
    shown, log = io.StringIO(), io.StringIO()
    console = PromptfooConsole(log, show=shown)
    for line in PROMPTFOO_NOISE.splitlines():
        console.feed(line)
    console.feed(_marker(id="C01", status="PASS", latency_ms=12300))
    console.feed(_marker(id="C18", status="FAIL", latency_ms=4000,
                         reason="pull_request: expected no pull request, but PR(s) created in the conversation: 7"))
    console.feed(_marker(id="Q01", status="ERROR", latency_ms=100, error_kind="system",
                         reason="[system] the portal at http://127.0.0.1:8400 is not reachable", not_graded=1))
    console.feed("Error: Cannot find module 'x'")  # Promptfoo's own error: shown as it came
    assert shown.getvalue().splitlines() == [
        "  C01    PASS    12.3s",
        "  C18    FAIL     4.0s  pull_request: expected no pull request, but PR(s) created in the conversation: 7",
        "  Q01    ERROR    0.1s  [system] the portal at http://127.0.0.1:8400 is not reachable  (1 not graded)",
        "Error: Cannot find module 'x'",
    ]
    logged = log.getvalue()
    assert "» View results: promptfoo view" in logged and "┌" in logged  # everything is in the suite's log
    counts = console.counts
    assert (counts.passed, counts.failed, counts.errors, counts.not_graded) == (1, 1, 1, 1)
    assert suite_summary("spoke-create", counts, 12.4, "eval-abc") == (
        "spoke-create: 1 passed, 1 failed, 1 error(s) (system 1), 1 check(s) not graded in 12 s; eval eval-abc"
    )


def test_the_table_is_shown_when_asked_and_long_reasons_are_cut() -> None:
    shown = io.StringIO()
    console = PromptfooConsole(None, table=True, show=shown)
    console.feed("│ simulated_us │ [spoke] {{ … │")
    console.feed(_marker(id="C02", status="FAIL", latency_ms=1, reason="x" * 400))
    lines = shown.getvalue().splitlines()
    assert lines[0].startswith("│")
    assert lines[1].endswith("…") and len(lines[1]) < 200


SEQUENCE = ("tool_sequence in_order: expected get_spoke → get_spoke_schema → validate_spoke_config → "
            "create_spoke_pull_request; actual get_spoke, validate_spoke_config, create_spoke_pull_request; "
            "missing get_spoke_schema after get_spoke")


@pytest.mark.parametrize(
    ("reason", "kept"),
    [
        (SEQUENCE, "; missing get_spoke_schema after get_spoke"),  # the lists are cut, not the diagnosis
        ("tool_not_executed: forbidden tool called: complete_pull_request in turn 2; forbidden: "
         + ", ".join(f"tool_{i}" for i in range(40)), "tool_not_executed: forbidden tool called: complete_pull_request "
                                                       "in turn 2; forbidden: tool_0"),
        ("argument_match: create_spoke_pull_request (call 3, turn 2):\n  /spoke_name: expected \"a\", got \"b\"\n"
         "  /x: expected 1, got 2\n  /y: expected 1, got 2", " — /spoke_name: expected \"a\", got \"b\"; /x: expected 1"),
    ],
)
def test_a_long_reason_keeps_what_went_wrong(reason: str, kept: str) -> None:
    line = case_line({"id": "C01", "status": "FAIL", "latency_ms": 1400, "reason": reason})
    assert kept in line and len(line) <= 24 + 160, line
    assert line.split("1.4s  ")[1] == brief(reason, 160)  # as every report format shows it


def test_a_broken_marker_is_ignored_not_fatal() -> None:
    shown = io.StringIO()
    console = PromptfooConsole(None, show=shown)
    console.feed(MARKER + "{not json")
    assert shown.getvalue() == "" and console.counts.total == 0


def test_a_busy_wal_checkpoint_of_suites_side_by_side_is_left_out_with_its_context() -> None:
    """Promptfoo warns when it closes the results database while another suite's Promptfoo holds it
    (the other checkpoints it later): the warning and its JSON block are logged, not shown."""
    shown, log = io.StringIO(), io.StringIO()
    console = PromptfooConsole(log, show=shown)
    for line in ["WAL checkpoint incomplete before closing database", "{", '  "busy": 1,', '  "log": -1,',
                 '  "checkpointed": -1', "}", "Error: something else", "{", "}"]:
        console.feed(line)
    assert shown.getvalue().splitlines() == ["Error: something else", "{", "}"]  # only the warning's own block
    assert "WAL checkpoint incomplete" in log.getvalue()


def test_invalid_and_incomplete_rows_are_counted_apart() -> None:
    console = PromptfooConsole(show=io.StringIO())
    for status in ("PASS", "INVALID", "INVALID", "INCOMPLETE", "ERROR"):
        console.feed(MARKER + json.dumps({"id": "C07", "status": status, "error_kind": "model"}))
    counts = console.counts
    assert (counts.passed, counts.invalid, counts.incomplete, counts.errors, counts.total) == (1, 2, 1, 1, 5)
    assert suite_summary("s", counts, 3, None) == (
        "s: 1 passed, 0 failed, 1 error(s) (model 1), 2 invalid (the simulated user spoiled the conversation; "
        "neither pass nor fail), 1 incomplete (a deciding check was not graded) in 3 s"
    )
