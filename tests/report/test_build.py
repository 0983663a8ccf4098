"""The report of synthetic results with known repeats (tests/report/scenario.py), by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_evals.report import build_report
from agent_evals.report.model import CaseSummary, Report
from agent_evals.report.sources import load_results
from tests.report.conftest import write_results
from tests.report.scenario import scenario_rows


def _report(tmp_path: Path, rows: list[dict], k: int | None = None, **kwargs: object) -> Report:
    loaded = load_results([str(write_results(tmp_path, rows, **kwargs))])
    return build_report(loaded.evals, loaded.runs, loaded.rows, k=k)


def _case(report: Report, case_id: str) -> CaseSummary:
    return next(case for case in report.cases if case.id == case_id)


def test_cases_across_repeats(tmp_path: Path) -> None:
    report = _report(tmp_path, scenario_rows())
    c01, c02, c03, c04 = (_case(report, f"C0{i}") for i in range(1, 5))
    assert [c.id for c in report.cases] == ["C01", "C02", "C03", "C04"]
    assert (c01.runs, c01.passed, c01.failed, c01.errors) == (4, 2, 2, 0)
    assert (c01.k, c01.pass_hat_k, c01.pass_rate, c01.flaky, c01.verdict) == (4, 0.0, 0.5, True, "flaky")
    assert (c02.k, c02.pass_hat_k, c02.flaky, c02.verdict) == (4, 1.0, False, "pass")
    assert (c03.runs, c03.passed, c03.failed, c03.errors) == (4, 0, 3, 1)
    assert (c03.k, c03.pass_hat_k, c03.verdict) == (3, 0.0, "fail")  # the error is not a run: n = 3
    assert (c04.errors, c04.k, c04.pass_hat_k, c04.verdict) == (
        2,
        2,
        1.0,
        "pass",
    )  # errors are neither pass nor fail
    assert c01.ends == {"done": 3, "max_turns": 1} and c03.ends == {"done": 3, "error": 1}
    assert c04.error_kinds == {"system": 2} and c04.first_error == "[system] the portal is not reachable"
    assert c01.mean_turns == pytest.approx((2 + 2 + 2 + 6) / 4) and c01.mean_tool_calls == 2
    assert c01.first_failure is not None and c01.first_failure.startswith("tool_sequence in_order")
    assert [(f.test_idx, f.metric) for f in c01.failures] == [(1, "tool_sequence"), (3, "input_diff")]
    assert c01.usage["agent"].calls == 4 * 3 and c01.usage["user"].cost == pytest.approx(4 * 0.001)


def test_pass_hat_k_with_k(tmp_path: Path) -> None:
    report = _report(tmp_path, scenario_rows(), k=2)
    assert _case(report, "C01").pass_hat_k == pytest.approx(1 / 6)  # C(2,2)/C(4,2)
    assert _case(report, "C02").pass_hat_k == 1.0
    assert _case(report, "C04").pass_hat_k == 1.0  # n = 2 graded runs, both passed
    assert all(case.k == 2 for case in report.cases)
    assert any("errors are not runs" in note for note in report.notes)
    three = _report(tmp_path, scenario_rows(), k=3)
    assert _case(three, "C04").pass_hat_k is None  # 2 graded runs < k = 3: no estimate
    assert _case(three, "C01").pass_hat_k == 0.0  # C(2,3) = 0


def test_groups_priorities_and_totals(tmp_path: Path) -> None:
    report = _report(tmp_path, scenario_rows())
    groups = {g.name: g for g in report.groups}
    assert list(groups) == ["blocked", "copy", "new"]
    copy = groups["copy"]
    assert (copy.cases, copy.runs, copy.passed, copy.failed, copy.errors, copy.flaky) == (2, 8, 6, 2, 0, 1)
    assert copy.pass_hat_k == pytest.approx(0.5) and copy.pass_rate == pytest.approx(6 / 8)
    priorities = {p.name: p for p in report.priorities}
    assert priorities["smoke"].pass_hat_k == pytest.approx(1 / 3)  # mean of C01 0, C03 0, C04 1
    assert priorities["smoke"].case_ids == ("C01", "C03", "C04")
    assert priorities["full"].pass_hat_k == 1.0
    t = report.totals
    assert (t.cases, t.runs, t.passed, t.failed, t.errors, t.flaky) == (4, 16, 8, 5, 3, 1)
    assert t.pass_hat_k == pytest.approx(0.5) and t.pass_rate == pytest.approx(8 / 13)
    assert report.errors_by_kind == {"model": 1, "system": 2}
    assert report.cost == pytest.approx(16 * 0.011)


def test_errors_make_the_run_incomplete(tmp_path: Path) -> None:
    report = _report(tmp_path, scenario_rows())
    assert not report.complete
    assert report.incomplete == ("3 error row(s) (system 2, model 1)",)
    clean = _report(tmp_path, [r for r in scenario_rows() if r["failureReason"] != 2])
    assert clean.complete and clean.incomplete == ()


def test_an_unfinished_file_and_an_empty_one_are_incomplete(tmp_path: Path) -> None:
    unfinished = _report(tmp_path, [r for r in scenario_rows() if r["failureReason"] != 2], finished=False)
    assert not unfinished.complete and "did not finish" in unfinished.incomplete[0]
    empty = _report(tmp_path, [])
    assert not empty.complete and empty.incomplete == ("no result rows",)


def test_metrics_mean_pass_rate_and_direction(tmp_path: Path) -> None:
    report = _report(tmp_path, scenario_rows())
    metrics = {m.name: m for m in report.metrics}
    # pull_request passes in all 13 graded rows; the 3 error rows have no scores
    assert (metrics["pull_request"].rows, metrics["pull_request"].pass_rate) == (13, 1.0)
    assert metrics["input_diff"].mean == 0.0 and metrics["input_diff"].pass_rate == 0.0
    assert metrics["input_diff"].rows == 4 and metrics["tool_sequence"].rows == 1
    assert {m.direction for m in report.metrics} == {"higher"}


def test_a_legacy_count_metric_is_lower_is_better() -> None:
    from agent_evals.report.metric_scores import direction

    assert direction("collateral_changes") == "lower" and direction("schema_errors") == "lower"
    assert direction("no_collateral_changes") == "higher" and direction("reliability") == "higher"


def test_failure_patterns_by_metric_tool_and_path(tmp_path: Path) -> None:
    report = _report(tmp_path, scenario_rows())
    patterns = {(p.kind, p.name): p for p in report.patterns}
    path = patterns[("path", "/addressSpace/0")]
    assert (path.cases, path.runs, path.metrics) == (("C01", "C03"), 4, ("input_diff",))
    assert patterns[("metric", "input_diff")].cases == ("C01", "C03")
    assert patterns[("tool", "create_spoke_pull_request")].runs == 4
    assert patterns[("tool", "validate_spoke_config")].cases == ("C01",)
    assert [p.kind for p in report.patterns] == sorted(
        (p.kind for p in report.patterns), key="metric tool path".split().index
    )


def test_providers_are_cases_of_their_own(tmp_path: Path) -> None:
    rows = scenario_rows("baseline") + scenario_rows("terse", offset=100)
    report = _report(tmp_path, rows)
    assert [(c.id, c.provider) for c in report.cases][:2] == [("C01", "baseline"), ("C01", "terse")]
    assert len(report.cases) == 8 and report.totals.runs == 32
    assert {p for p, _ in report.label.agents} == {"baseline", "terse"}
    assert report.patterns[0].cases[0].startswith(("baseline:", "terse:"))  # pattern cases name the provider


def test_rows_without_a_case_id_say_so(tmp_path: Path) -> None:
    rows = [r for r in scenario_rows() if r["testCase"]["metadata"]["id"] == "C02"]
    for row in rows:
        del row["response"]["metadata"], row["testCase"]["metadata"]["id"]
    report = _report(tmp_path, rows)
    assert [c.id for c in report.cases] == ["C02"] and report.cases[0].runs == 4
    assert report.notes == ("4 row(s) had no case id: the description's leading id was used",)


def test_k_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        _report(tmp_path, scenario_rows(), k=0)
