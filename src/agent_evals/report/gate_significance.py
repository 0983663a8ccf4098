"""The gate's statistical rules against a baseline (pure).

- ``no_significant_regression: [priorities]`` (or ``[all]``): broken when a case of those
  priorities, or their runs pooled, got significantly worse — one family of one-sided exact
  tests at ``alpha`` (:func:`agent_evals.report.evidence.judge_scope`). The line names the
  likely regressions and the verdict regressions (pass → fail) it found not significant, with
  their p-values, so none of them is silent. A scope whose every case has fewer than
  ``min_baseline_runs`` graded runs in the baseline cannot show a regression: the rule cannot
  decide; a few such cases are named.
- the baseline's age: older than ``baseline_max_age_days`` (its blessing's date, else its newest
  eval's) is a warning: bless a new one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from agent_evals.report.compare import Comparison
from agent_evals.report.evidence import CaseEvidence, judge_scope
from agent_evals.report.gate_file import ALL, Gate
from agent_evals.report.gate_rule import Rule, listed


def significance_rule(gate: Gate, comparison: Comparison | None) -> Rule:
    scope = gate.no_significant_regression
    name = "no_significant_regression (" + ("every case" if ALL in scope else "priority " + ", ".join(scope)) + ")"
    if comparison is None or comparison.evidence is None:
        return Rule(name, "not_checked", "no baseline given (--baseline)")
    cases = [c for c in comparison.evidence.cases if ALL in scope or c.priority in scope]
    if not cases:
        return Rule(name, "not_checked", "no case of these priorities in both the baseline and the results")
    thin = [c for c in cases if c.evidence.runs_before < gate.min_baseline_runs]
    thin_line = (f"the baseline has fewer than {gate.min_baseline_runs} graded runs for "
                 f"{len(thin)} case(s) ({listed([_runs(c) for c in thin])})")
    if len(thin) == len(cases):
        return Rule(name, "undecided", thin_line + ": it cannot show a regression; bless a baseline with more runs")
    verdict = judge_scope(cases, gate.alpha)
    head = (f"α {gate.alpha:g} family-wise over {verdict.cases} case(s) and their pooled runs "
            f"({verdict.family.testable} could reach it: p ≤ {verdict.family.threshold:.3g})")
    notes = _notes(cases, comparison, {c.id for c, _ in verdict.worse}) + ([thin_line] if thin else [])
    if verdict.worse or verdict.pooled_worse:
        found = [f"{c.id} {c.evidence.rates} p={p:.3g}" for c, p in verdict.worse]
        if verdict.pooled_worse:
            found.append(f"the cases pooled {verdict.pooled.rates} p={verdict.pooled.worse:.3g}")
        return Rule(name, "broken", f"significantly worse: {listed(found)} ({head})" + _tail(notes))
    return Rule(name, "holds", f"no significant regression ({head})" + _tail(notes))


def _notes(cases: Sequence[CaseEvidence], comparison: Comparison, significant: set[str]) -> list[str]:
    """The likely regressions and the verdict regressions (pass → fail or flaky) the family did not
    find significant: named with their runs and p, so the gate is never silent about them."""
    verdicts = {change.id: f"{change.before}→{change.after} " for change in comparison.of("regression")}
    named = [
        f"{c.id} {verdicts.get(c.id, '')}{_p(c)}" + (" (likely regression)" if c.evidence.tier == "likely_regression" else "")
        for c in cases
        if c.id not in significant and (c.id in verdicts or c.evidence.tier == "likely_regression")
    ]
    return [f"not significant: {listed(named)}"] if named else []


def _p(case: CaseEvidence) -> str:
    if case.evidence.worse is None:
        return "(no graded run on a side)"
    return f"{case.evidence.rates} p={case.evidence.worse:.3g}"


def _runs(case: CaseEvidence) -> str:
    return f"{case.id} {case.evidence.runs_before}"


def _tail(notes: list[str]) -> str:
    return "; " + "; ".join(notes) if notes else ""


def stale_baseline(gate: Gate, comparison: Comparison | None, now: datetime | None = None) -> Rule | None:
    """A warning when the baseline is older than ``baseline_max_age_days``."""
    if comparison is None:
        return None
    blessed = comparison.baseline_blessed
    stamp = blessed.blessed_at if blessed is not None else comparison.baseline_created
    if not stamp:
        return None
    try:
        then = datetime.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    days = ((now or datetime.now(UTC)) - then).days
    if days <= gate.baseline_max_age_days:
        return None
    what = "blessed" if blessed is not None else "made"
    return Rule("baseline", "warning", f"{what} {stamp[:10]}, {days} days ago: older than baseline_max_age_days "
                                       f"{gate.baseline_max_age_days}; bless a new one (agent-evals baseline bless)")
