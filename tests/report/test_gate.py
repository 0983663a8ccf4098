"""Every rule of the gate, where it holds and where it breaks, with its one line."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_evals.report import build_report, check_gate, compare, load_results, parse_gate
from agent_evals.report.model import Report
from tests.report.conftest import write_results
from tests.report.scenario import scenario_rows
from tests.report.test_compare import _runs


def _report(tmp_path: Path, rows: list[dict[str, Any]], name: str = "r", k: int | None = None) -> Report:
    loaded = load_results([str(write_results(tmp_path, rows, f"{name}.json", eval_id=f"eval-{name}"))])
    return build_report(loaded.evals, loaded.runs, loaded.rows, k=k)


def _lines(gate: dict[str, Any], report: Report, baseline: Report | None = None) -> list[str]:
    comparison = compare(report, baseline) if baseline else None
    return check_gate(parse_gate(gate), report, comparison, now=NOW).lines()


NOW = datetime(2026, 1, 2, tzinfo=UTC)  # a day after the synthetic results were made
CLEAN = _runs("C01", "ppp") + _runs("C02", "ppp", start=3, priority="full")


def test_a_clean_run_holds_every_rule(tmp_path: Path) -> None:
    gate = {
        "max_flaky": 0,
        "min_pass_hat_k": {"all": 1.0, "priority": {"smoke": 1.0}},
        "max_cost_usd": 1,
        "no_regressions": ["all"],
    }
    report = _report(tmp_path, CLEAN)
    verdict = check_gate(parse_gate(gate), report, compare(report, report), now=NOW)
    assert verdict.holds
    assert verdict.lines() == [
        "ok     require_complete: the run is complete",
        "ok     max_errors: 0 error row(s), at most 0",
        "ok     max_flaky: 0 flaky case(s), at most 0",
        "ok     min_pass_hat_k (all cases): pass^k (k=runs) 1.00 over 2 case(s), at least 1.00",
        "ok     min_pass_hat_k priority smoke: pass^k (k=runs) 1.00 over 1 case(s), at least 1.00",
        "ok     no_regressions (every case): no case that passed in the baseline fails or is flaky now",
        "ok     max_cost_usd: cost $0.0660, at most $1.0000",
        "gate holds: 7 rule(s) checked",
    ]


def test_the_scenario_breaks_each_rule(tmp_path: Path) -> None:
    gate = {"max_flaky": 0, "min_pass_hat_k": {"priority": {"smoke": 1.0, "full": 1.0}}, "max_cost_usd": 0.1}
    lines = _lines(gate, _report(tmp_path, scenario_rows()))
    assert lines == [
        "BROKEN require_complete: the run is incomplete: 3 error row(s) (system 2, model 1)",
        "BROKEN max_errors: 3 error row(s) (model 1, system 2), at most 0",
        "BROKEN max_flaky: 1 flaky case(s) (C01), at most 0",
        "BROKEN min_pass_hat_k priority smoke: pass^k (k=runs) 0.33 over 3 case(s), at least 1.00; below: C01 0.00, C03 0.00",
        "ok     min_pass_hat_k priority full: pass^k (k=runs) 1.00 over 1 case(s), at least 1.00",
        "BROKEN max_cost_usd: cost $0.1760, at most $0.1000",
        "gate broken: 5 of 6 rule(s)",
    ]


def test_k_of_the_gate_file(tmp_path: Path) -> None:
    rows = _runs("C01", "ppppf")  # pass^5 = 0, pass^2 = C(4,2)/C(5,2) = 0.6
    assert "BROKEN min_pass_hat_k" in _lines({"min_pass_hat_k": {"all": 0.5}}, _report(tmp_path, rows))[2]
    held = _lines({"k": 2, "min_pass_hat_k": {"all": 0.5}}, _report(tmp_path, rows, k=2))
    assert held[2] == "ok     min_pass_hat_k (all cases): pass^k (k=2) 0.60 over 1 case(s), at least 0.50"


def test_errors_allowed_but_the_run_still_incomplete(tmp_path: Path) -> None:
    rows = _runs("C01", "ppe")
    lines = _lines({"max_errors": 1}, _report(tmp_path, rows))
    assert lines[:2] == [
        "BROKEN require_complete: the run is incomplete: 1 error row(s) (model 1)",
        "ok     max_errors: 1 error row(s) (model 1), at most 1",
    ]
    assert (
        _lines({"max_errors": 1, "require_complete": False}, _report(tmp_path, rows))[-1]
        == "gate holds: 1 rule(s) checked"
    )


def test_regressions_against_the_baseline(tmp_path: Path) -> None:
    baseline = _report(tmp_path, CLEAN, "base")
    current = _report(tmp_path, _runs("C01", "pfp") + _runs("C02", "fff", start=3, priority="full"), "now")
    smoke = _lines({"no_regressions": ["smoke"], "require_complete": False}, current, baseline)
    assert (
        smoke[1]
        == "BROKEN no_regressions (priority smoke): 1 regression(s) against the baseline: C01 pass→flaky"
    )
    every = _lines({"no_regressions": ["all"]}, current, baseline)
    assert (
        every[2]
        == "BROKEN no_regressions (every case): 2 regression(s) against the baseline: C01 pass→flaky, C02 pass→fail"
    )
    improved = _lines({"no_regressions": ["all"]}, baseline, current)
    assert improved[2].startswith("ok     no_regressions")


def test_rules_without_their_subject_are_not_checked(tmp_path: Path) -> None:
    lines = _lines(
        {"no_regressions": ["smoke"], "min_pass_hat_k": {"group": {"nope": 1.0}}}, _report(tmp_path, CLEAN)
    )
    assert "--     min_pass_hat_k group nope: no case of group nope in the results" in lines
    assert "--     no_regressions (priority smoke): no baseline given (--baseline)" in lines
    assert lines[-1] == "gate holds: 2 rule(s) checked"


def test_a_group_with_only_errors_breaks_its_threshold(tmp_path: Path) -> None:
    lines = _lines(
        {"require_complete": False, "max_errors": 9, "min_pass_hat_k": {"all": 0.5}},
        _report(tmp_path, _runs("C01", "ee")),
    )
    assert (
        lines[1]
        == "BROKEN min_pass_hat_k (all cases): no graded run in 1 case(s) (errors only), at least 0.50"
    )
