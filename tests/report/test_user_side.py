"""The report and the gate with invalid rows (the simulated user spoiled the conversation),
incomplete rows (a deciding check was not graded), re-runs of invalid rows, and the quality of the
simulated users: invalid rows are neither pass nor fail, out of pass^k and of the gate's counts,
counted and listed apart in every format."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from agent_evals.report import build_report, check_gate, parse_gate
from agent_evals.report.command import gate_command, render
from agent_evals.report.model import CaseSummary, EvalInfo, Report
from agent_evals.report.rows import Row, row_from_promptfoo
from agent_evals.report.sources import load_results
from agent_evals.testing.promptfoo_results import result_row
from tests.report.conftest import import_results, needs_promptfoo, write_results

SPOILED = ("invented_fact", 2, "the user invented region 'westus9' (not in its facts, not said by the assistant)")
EARLY = ("ended_early", 1, "the user said it was done while the assistant was still asking ('Shall I?')")


def _rows(eval_id: str = "eval-a") -> list[dict]:
    return [
        result_row("C07", 0, "pass"), result_row("C07", 1, "invalid", findings=[SPOILED]), result_row("C07", 2, "fail",
                                                                                                          failing=[("route", "route: wrong")]),
        result_row("C08", 3, "pass"), result_row("C08", 4, "invalid", findings=[EARLY]),
        result_row("C09", 5, "invalid", findings=[SPOILED]), result_row("C09", 6, "invalid", findings=[SPOILED, EARLY]),
        result_row("C10", 7, "pass", user={"kind": "user_messages", "model": None}),
    ]


def _report(rows: list[dict], evals: list[EvalInfo] | None = None, eval_of: list[str] | None = None) -> Report:
    eval_of = eval_of or ["eval-a"] * len(rows)
    parsed = [row_from_promptfoo(raw, eid) for raw, eid in zip(rows, eval_of, strict=True)]
    evals = evals or [EvalInfo("eval-a", "database", suite="spoke-create")]
    return build_report(evals, [], parsed)


def _case(report: Report, case_id: str) -> CaseSummary:
    return next(case for case in report.cases if case.id == case_id)


def test_invalid_rows_are_neither_pass_nor_fail_and_stay_out_of_pass_hat_k() -> None:
    report = _report(_rows())
    c07, c08, c09 = _case(report, "C07"), _case(report, "C08"), _case(report, "C09")
    assert (c07.runs, c07.passed, c07.failed, c07.errors, c07.invalid) == (3, 1, 1, 0, 1)
    assert (c07.k, c07.pass_hat_k, c07.verdict) == (2, 0.0, "flaky")  # n = 2 graded runs
    assert (c08.k, c08.pass_hat_k, c08.verdict) == (1, 1.0, "pass")  # the invalid run does not count against it
    assert (c09.pass_hat_k, c09.verdict, c09.invalid, c09.first_error) == (
        None, "invalid", 2, f"[user_simulator] invalid: C09 turn 2, {SPOILED[2]}"
    )
    assert report.complete and report.errors_by_kind == {}  # invalid rows are not errors
    assert (report.totals.invalid, report.totals.errors) == (4, 0)
    assert report.totals.pass_hat_k == 2 / 3  # the mean over C07 (0), C08 (1), C10 (1): C09 has no graded run
    assert [(r.case_id, r.reason, r.attempts, r.outcome) for r in report.invalid_runs] == [
        ("C07", f"turn 2, {SPOILED[2]}", 1, "invalid"), ("C08", f"turn 1, {EARLY[2]}", 1, "invalid"),
        ("C09", f"turn 2, {SPOILED[2]}", 1, "invalid"), ("C09", f"turn 2, {SPOILED[2]}", 1, "invalid"),
    ]


def test_every_format_counts_and_lists_invalid_runs_apart() -> None:
    report = _report(_rows())
    terminal = render(report, None, "terminal")
    assert terminal.splitlines()[0].startswith("4 case(s), 8 run(s): 3 passed, 1 failed, 0 error(s), 4 invalid;")
    assert "invalid: 4 run(s) spoiled by the simulated user, left out of pass^k" in terminal
    assert f"  C07 turn 2, {SPOILED[2]}" in terminal
    assert re.search(r"^C09 +copy +smoke +2 +0 +0 +0 +- +INVALID .* done 2, 2 invalid$", terminal, re.M)
    assert "  spoke-create, user user-model: 4 of 7 checked conversation(s) flagged (57%)\n" \
           "    ended_early 2 (29%), invented_fact 3 (43%)\n" in terminal
    assert "1 row(s) with fixed user messages: no user checks apply" in terminal
    markdown = render(report, None, "markdown")
    assert "**Invalid: 4 run(s) spoiled by the simulated user, left out of pass^k.**" in markdown
    assert f"- C07 turn 2, {SPOILED[2]}" in markdown
    assert "<summary>Simulated users (share of conversations the user checks flagged)</summary>" in markdown
    data = json.loads(render(report, None, "json"))
    assert data["totals"]["invalid"] == 4 and data["fixed_user_rows"] == 1
    assert data["invalid_runs"][0] == {"case_id": "C07", "provider": "agent", "reason": f"turn 2, {SPOILED[2]}",
                                       "attempts": 1, "outcome": "invalid", "suite": "spoke-create"}
    assert data["simulator_quality"] == [{
        "suite": "spoke-create", "user_model": "user-model", "conversations": 7, "flagged": 4,
        "by_check": {"ended_early": 2, "invented_fact": 3}, "undecided": 0, "errors": 0, "share": 4 / 7,
    }]
    suite = ET.fromstring(render(report, None, "junit")).find("testsuite")
    assert suite is not None and suite.get("skipped") == "1" and suite.get("failures") == "1"
    c09 = next(t for t in suite.iter("testcase") if t.get("name", "").startswith("C09"))
    skipped = c09.find("skipped")
    assert skipped is not None and skipped.get("message", "").startswith(
        "the simulated user spoiled every run (invalid): [user_simulator] invalid: C09 turn 2"
    )


def test_the_gate_leaves_invalid_runs_out_and_may_limit_them(tmp_path: Path) -> None:
    report = _report(_rows())
    gate = parse_gate({"max_errors": 0, "min_pass_hat_k": {"priority": {"smoke": 0.5}}})
    verdict = check_gate(gate, report)
    assert verdict.holds, verdict.lines()
    assert "--     max_invalid: 4 invalid run(s) left out of the verdict (C07, C08, C09); no limit in the gate file " \
           "(max_invalid)" in verdict.lines()
    strict = check_gate(parse_gate({"max_invalid": 1}), report)
    assert [r.name for r in strict.broken] == ["max_invalid"]
    assert strict.broken[0].line.endswith(", at most 1")
    path = write_results(tmp_path, _rows(), eval_id="eval-gate")
    (tmp_path / "gate.yaml").write_text("max_invalid: 4\nmin_pass_hat_k: {all: 0.5}\n")
    assert gate_command([str(path)], gate_file=tmp_path / "gate.yaml") == 0
    (tmp_path / "gate.yaml").write_text("max_invalid: 3\n")
    assert gate_command([str(path)], gate_file=tmp_path / "gate.yaml") == 1


def test_an_incomplete_row_is_neither_pass_nor_fail_and_makes_the_run_incomplete() -> None:
    rows = [result_row("C01", 0, "pass"), result_row("C01", 1, "incomplete"),
            result_row("C02", 2, "incomplete", failing=[("route", "route: wrong")])]  # a real failure decides
    report = _report(rows)
    c01, c02 = _case(report, "C01"), _case(report, "C02")
    assert (c01.passed, c01.incomplete, c01.pass_hat_k, c01.verdict) == (1, 1, 1.0, "pass")
    assert (c02.failed, c02.incomplete, c02.verdict) == (1, 0, "fail")
    assert not report.complete
    assert "1 incomplete row(s) (a check that decides the row could not be graded)" in report.incomplete
    assert "statements" not in {m.name for m in report.metrics}  # a score of a check not graded is no score


def _attempt(case: str, idx: int, outcome: str, findings: list | None = None) -> dict:
    return result_row(case, idx, outcome, findings=findings or ([SPOILED] if outcome == "invalid" else []))  # type: ignore[arg-type]


def test_a_re_run_takes_the_place_of_an_invalid_row_and_every_attempt_is_kept() -> None:
    first = [_attempt("C07", 0, "pass"), _attempt("C07", 1, "invalid"), _attempt("C09", 2, "invalid"),
             _attempt("C11", 3, "invalid")]
    second = [_attempt("C07", 0, "pass"), _attempt("C09", 1, "invalid"), _attempt("C11", 2, "fail")]
    third = [_attempt("C09", 0, "invalid")]
    evals = [EvalInfo("eval-1", "database", suite="s"), EvalInfo("eval-2", "database", suite="s", attempt=2),
             EvalInfo("eval-3", "database", suite="s", attempt=3)]
    report = _report(first + second + third, evals, ["eval-1"] * 4 + ["eval-2"] * 3 + ["eval-3"])
    c07, c09, c11 = _case(report, "C07"), _case(report, "C09"), _case(report, "C11")
    assert (c07.runs, c07.passed, c07.invalid, c07.attempts, c07.pass_hat_k) == (2, 2, 0, 3, 1.0)
    assert (c09.runs, c09.invalid, c09.attempts, c09.verdict) == (1, 1, 3, "invalid")  # counted once, all attempts
    assert (c11.runs, c11.failed, c11.invalid, c11.verdict) == (1, 1, 0, "fail")
    assert [(r.case_id, r.attempts, r.outcome) for r in report.invalid_runs] == [
        ("C07", 2, "pass"), ("C09", 3, "invalid"), ("C11", 2, "fail")
    ]
    terminal = render(report, None, "terminal")
    assert "invalid: 1 run(s) spoiled by the simulated user, left out of pass^k; 2 re-run to a pass or fail" in terminal
    assert "  C09 (invalid on all 3 attempts) turn 2, the user invented region 'westus9'" in terminal
    assert "  C07 (re-run: pass on attempt 2) turn 2, the user invented region 'westus9'" in terminal
    assert report.simulator[0].conversations == 8  # every attempt measures the simulator


def test_a_conversation_that_broke_off_on_the_simulated_user_counts_apart_in_its_quality() -> None:
    rows = [result_row("C01", 0, "pass"), result_row("C02", 1, "error", error_kind="user_simulator",
                                                     error="the simulated user's reply was cut off at 400 tokens")]
    [quality] = _report(rows).simulator
    assert (quality.conversations, quality.flagged, quality.errors) == (1, 0, 1)
    assert "  1 conversation(s) broke off on the simulated user (its model failed or its reply was cut off)" \
        in render(_report(rows), None, "terminal")


@needs_promptfoo
def test_the_database_reads_the_user_side_as_the_file_does(tmp_path: Path, config_dir: Path) -> None:
    path = write_results(tmp_path, _rows(), eval_id="eval-users")
    import_results(config_dir, path)
    from_file = load_results([str(path)]).rows
    from_db = load_results(["eval-users"]).rows

    def view(rows: tuple[Row, ...]) -> list[tuple]:
        return [(r.case_id, r.outcome, r.error_kind, r.user) for r in sorted(rows, key=lambda r: r.test_idx)]

    assert view(from_db) == view(from_file)
    assert view(from_db)[1][1:3] == ("invalid", "user_simulator")


def test_a_promptfoo_grader_that_failed_is_not_graded_never_the_agents_failure() -> None:
    row = result_row("Q01", 0, "fail", failing=[("rubric", "Could not parse the grader's reply")])
    row["gradingResult"]["componentResults"][-1]["metadata"] = {"graderError": True}  # llm-rubric's grader failed
    parsed = row_from_promptfoo(row, "eval-a")
    assert parsed.outcome == "incomplete" and parsed.failures == ()
    assert parsed.not_graded == ("rubric: NOT GRADED: the grader failed: Could not parse the grader's reply",)
