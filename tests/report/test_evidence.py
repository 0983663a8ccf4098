"""The evidence of each change (tiers, family-wise significance, groups, thin baselines), the
gate's no_significant_regression rule on it, and baselines of another suite or agent refused."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agent_evals.report import ReportInputError, check_gate, compare, parse_gate
from agent_evals.report.format_terminal import render_terminal
from tests.report.test_compare import _report, _runs


def _pair(tmp_path: Path, before: list, after: list):  # type: ignore[no-untyped-def]
    return _report(tmp_path, "base", before), _report(tmp_path, "now", after)


STEADY = [_runs(f"C{n:02d}", "ppppp", start=10 * n) for n in range(10, 20)]  # ten cases that always pass


def test_tiers_per_case(tmp_path: Path) -> None:
    steady = [row for rows in STEADY for row in rows]
    baseline, current = _pair(
        tmp_path,
        _runs("C05", "ppppp") + _runs("C07", "ppp", start=5) + _runs("C09", "fffff", start=8) + _runs("C01", "p", start=13)
        + _runs("C02", "ee", start=14) + steady,
        _runs("C05", "fffff") + _runs("C07", "pff", start=5) + _runs("C09", "ppppp", start=8) + _runs("C01", "f", start=13)
        + _runs("C02", "pp", start=14) + steady,
    )
    evidence = compare(current, baseline).evidence
    assert evidence is not None
    tiers = {c.id: c.evidence.tier for c in evidence.cases}
    assert tiers == {
        "C05": "regression", "C07": "likely_regression", "C09": "improvement", "C01": "no_evidence",
        "C02": "no_evidence", **{f"C{n}": "no_evidence" for n in range(10, 20)},
    }
    # the steady cases could never show anything, nor could C07 (3/3 → 0/3 is p 0.05 at best) or C01: they do
    # not dilute the family of C05, C09 (it could have got worse) and the pooled test
    assert (evidence.worse_family.testable, round(evidence.worse_family.threshold, 4)) == (3, 0.0167)
    c05 = next(c.evidence for c in evidence.cases if c.id == "C05")
    assert (c05.rates, round(c05.worse, 5)) == ("5/5 → 0/5", 0.00397)
    assert c05.interval is not None and c05.interval[1] < 0  # the whole interval says "worse"
    c02 = next(c.evidence for c in evidence.cases if c.id == "C02")
    assert c02.worse is None and c02.note == "no graded run on one side (errors only)"
    assert [c.id for c in evidence.unreliable] == ["C01", "C02"]  # 1 and 0 graded runs in the baseline

    text = render_terminal(current, compare(current, baseline))
    assert "    regression (1): C05 5/5 → 0/5, p=0.00397, change -1.00 [-1.00, -0.39]" in text
    assert "    likely regression (1): C07 3/3 → 1/3, p=0.2, change -0.67 [-0.94, +0.06]" in text
    assert "    improvement (1): C09 0/5 → 5/5, p=0.00397, change +1.00 [+0.39, +1.00]" in text
    assert "    unreliable baseline: 2 case(s) with fewer than 3 graded runs (C01 1, C02 0): " in text


def test_a_drop_spread_over_cases_shows_in_the_group(tmp_path: Path) -> None:
    """Six cases each lose one run of five: none is evidence alone (p 0.5), together they are (1/64)."""
    baseline, current = _pair(
        tmp_path,
        [row for n in range(6) for row in _runs(f"C0{n}", "ppppp", start=5 * n, group="copy")],
        [row for n in range(6) for row in _runs(f"C0{n}", "ppppf", start=5 * n, group="copy")],
    )
    evidence = compare(current, baseline).evidence
    assert evidence is not None
    assert {c.evidence.tier for c in evidence.cases} == {"no_evidence"}
    groups = {(g.kind, g.name): g for g in evidence.groups}
    assert groups[("group", "copy")].evidence.tier == "regression"
    assert groups[("group", "copy")].evidence.worse == pytest.approx(1 / 64)
    assert groups[("all", "all")].cases == 6

    verdict = check_gate(parse_gate({"no_significant_regression": ["all"], "require_complete": False}), current,
                         compare(current, baseline))
    assert verdict.broken[0].line.startswith(
        "significantly worse: the cases pooled 30/30 → 24/30 p=0.0156 (α 0.05 family-wise over 6 case(s)"
    )


def test_the_gate_breaks_on_a_significant_regression_and_names_the_rest(tmp_path: Path) -> None:
    steady = [row for rows in STEADY for row in rows]
    baseline, current = _pair(
        tmp_path,
        _runs("C05", "ppppp", priority="full") + _runs("C07", "ppp", start=5) + steady,
        _runs("C05", "fffff", priority="full") + _runs("C07", "pff", start=5) + steady,
    )
    comparison = compare(current, baseline)
    lines = check_gate(parse_gate({"no_significant_regression": ["all"]}), current, comparison).lines()
    assert lines[2] == (
        "BROKEN no_significant_regression (every case): significantly worse: C05 5/5 → 0/5 p=0.00397, "
        "the cases pooled 58/58 → 51/58 p=0.000794 "
        "(α 0.05 family-wise over 12 case(s) and their pooled runs (2 could reach it: p ≤ 0.025)); "
        "not significant: C07 pass→flaky 3/3 → 1/3 p=0.2 (likely regression)"
    )
    smoke = check_gate(parse_gate({"no_significant_regression": ["smoke"]}), current, comparison).lines()
    assert smoke[2].startswith("ok     no_significant_regression (priority smoke): no significant regression")
    assert smoke[3].startswith("WARN   uncovered regressions: 1 regression(s) against the baseline that no rule "
                               "covers: C05 pass→fail (priority full)")


def test_a_thin_baseline_cannot_decide(tmp_path: Path) -> None:
    baseline, current = _pair(tmp_path, _runs("C01", "p") + _runs("C02", "e", start=1),
                              _runs("C01", "fff") + _runs("C02", "ppp", start=1))
    lines = check_gate(parse_gate({"no_significant_regression": ["all"], "require_complete": False}), current,
                       compare(current, baseline)).lines()
    assert lines[1] == (
        "CANNOT no_significant_regression (every case): the baseline has fewer than 3 graded runs for 2 case(s) "
        "(C01 1, C02 0): it cannot show a regression; bless a baseline with more runs"
    )
    assert lines[-1] == "gate cannot decide: no_significant_regression (every case) (exit 2); 1 warning(s)"
    assert lines[-2].startswith("WARN   baseline: made 2026-01-01")  # synthetic results of January: stale


def test_a_baseline_of_another_agent_or_suite_is_refused(tmp_path: Path) -> None:
    other = {"name": "integration", "model": "agent-model", "temperature": 0.0, "instructions_sha256": "ef" * 32}
    baseline, current = _pair(tmp_path, _runs("C01", "ppp", agent=other), _runs("C01", "ppp"))
    with pytest.raises(ReportInputError, match=r"^the baseline is of agent integration; the results are of agent "
                                               r"agent \(provider spoke\): a baseline must come from the same agent$"):
        compare(current, baseline)
    baseline, current = _pair(tmp_path, _runs("C01", "ppp"), _runs("C01", "ppp"))
    qa = replace(baseline, cases=tuple(replace(c, suite="spoke-qa") for c in baseline.cases))
    create = replace(current, cases=tuple(replace(c, suite="spoke-create") for c in current.cases))
    with pytest.raises(ReportInputError, match=r"^the baseline is of suite spoke-qa; the results are of suite "
                                               r"spoke-create: a baseline must come from the same suite$"):
        compare(create, qa)
    assert compare(create, replace(qa, cases=create.cases)).evidence is not None  # same suite: compared
