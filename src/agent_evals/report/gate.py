"""The release gate: does a report meet the gate file's thresholds? (pure)

:func:`check_gate` gives one :class:`Rule` per threshold, each with one line saying what
was measured against what. A rule whose subject is absent (no case of that priority, no
baseline for ``no_regressions``) is *not checked* and says so; it neither holds nor breaks.
Results that cannot show the agent (a replay, deciding checks not graded:
:mod:`agent_evals.report.gate_trust`) make the gate *undecided* unless the gate file allows
them, and a regression no rule covers is named (:mod:`agent_evals.report.gate_coverage`).

The verdict: **broken** when a rule is broken; else **undecided** (cannot decide) when a rule
is; else it **holds**. Warnings never decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from agent_evals.report.compare import Comparison
from agent_evals.report.gate_coverage import uncovered_regressions
from agent_evals.report.gate_file import ALL, Gate, Scope
from agent_evals.report.gate_invalid import invalid_rule
from agent_evals.report.gate_rule import MAX_LISTED, Rule, Status, listed
from agent_evals.report.gate_significance import significance_rule, stale_baseline
from agent_evals.report.gate_trust import trust_rules
from agent_evals.report.model import GroupSummary, Report

Decision = Literal["holds", "broken", "undecided"]
EXIT_CODES: dict[Decision, int] = {"holds": 0, "broken": 1, "undecided": 2}
__all__ = ["MAX_LISTED", "Decision", "GateVerdict", "Rule", "Status", "check_gate"]


@dataclass(frozen=True)
class GateVerdict:
    rules: tuple[Rule, ...]

    def of(self, status: Status) -> tuple[Rule, ...]:
        return tuple(rule for rule in self.rules if rule.status == status)

    @property
    def broken(self) -> tuple[Rule, ...]:
        return self.of("broken")

    @property
    def decision(self) -> Decision:
        if self.broken:
            return "broken"
        return "undecided" if self.of("undecided") else "holds"

    @property
    def holds(self) -> bool:
        return self.decision == "holds"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.decision]

    def lines(self) -> list[str]:
        out = [rule.text() for rule in self.rules]
        checked = sum(1 for rule in self.rules if rule.status in ("holds", "broken", "undecided"))
        warnings = len(self.of("warning"))
        warned = f"; {warnings} warning(s)" if warnings else ""
        if self.decision == "broken":
            out.append(f"gate broken: {len(self.broken)} of {checked} rule(s){warned}")
        elif self.decision == "undecided":
            why = ", ".join(rule.name for rule in self.of("undecided"))
            out.append(f"gate cannot decide: {why} (exit 2){warned}")
        else:
            out.append(f"gate holds: {checked} rule(s) checked{warned}")
        return out


def check_gate(
    gate: Gate, report: Report, comparison: Comparison | None = None, *, now: datetime | None = None
) -> GateVerdict:
    rules: list[Rule] = trust_rules(gate, report)
    if gate.require_complete:
        rules.append(_complete(report))
    rules.append(_errors(report, gate.max_errors))
    if gate.max_flaky is not None:
        rules.append(_flaky(report, gate.max_flaky))
    rules += [_pass_hat_k(report, scope, name, threshold) for scope, name, threshold in gate.min_pass_hat_k]
    if gate.no_regressions:
        rules.append(_regressions(comparison, gate.no_regressions))
    if gate.no_significant_regression:
        rules.append(significance_rule(gate, comparison))
    if gate.max_cost_usd is not None:
        rules.append(_cost(report, gate.max_cost_usd))
    scopes = [gate.no_regressions, gate.no_significant_regression]
    rules += [rule for rule in (uncovered_regressions(comparison, scopes), stale_baseline(gate, comparison, now)) if rule]
    if gate.max_invalid is not None or report.invalid_runs:
        rules.append(invalid_rule(report, gate.max_invalid))
    return GateVerdict(tuple(rules))


def _complete(report: Report) -> Rule:
    if report.complete:
        return Rule("require_complete", "holds", "the run is complete")
    return Rule("require_complete", "broken", "the run is incomplete: " + "; ".join(report.incomplete))


def _errors(report: Report, most: int) -> Rule:
    errors = report.totals.errors
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(report.errors_by_kind.items()))
    line = f"{errors} error row(s)" + (f" ({kinds})" if kinds else "") + f", at most {most}"
    return Rule("max_errors", "holds" if errors <= most else "broken", line)


def _flaky(report: Report, most: int) -> Rule:
    flaky = [case.id for case in report.cases if case.flaky]
    line = f"{len(flaky)} flaky case(s)" + (f" ({listed(flaky)})" if flaky else "") + f", at most {most}"
    return Rule("max_flaky", "holds" if len(flaky) <= most else "broken", line)


def _pass_hat_k(report: Report, scope: Scope, name: str, threshold: float) -> Rule:
    label = "min_pass_hat_k " + ("(all cases)" if scope == ALL else f"{scope} {name}")
    group = _group(report, scope, name)
    if group is None:
        return Rule(label, "not_checked", f"no case of {scope} {name} in the results")
    if group.pass_hat_k is None:
        return Rule(
            label, "broken", f"no graded run in {group.cases} case(s) (errors only), at least {threshold:.2f}"
        )
    below = [
        f"{case.id} {case.pass_hat_k:.2f}" if case.pass_hat_k is not None else f"{case.id} -"
        for case in report.cases
        if case.id in group.case_ids and (case.pass_hat_k is None or case.pass_hat_k < threshold)
    ]
    k = f"k={report.k}" if report.k else "k=runs"
    line = f"pass^k ({k}) {group.pass_hat_k:.2f} over {group.cases} case(s), at least {threshold:.2f}"
    held = group.pass_hat_k >= threshold - 1e-12
    return Rule(
        label,
        "holds" if held else "broken",
        line + (f"; below: {listed(below)}" if below and not held else ""),
    )


def _group(report: Report, scope: Scope, name: str) -> GroupSummary | None:
    if scope == ALL:
        return report.totals if report.cases else None
    groups = report.priorities if scope == "priority" else report.groups
    return next((group for group in groups if group.name == name), None)


def _regressions(comparison: Comparison | None, priorities: Sequence[str]) -> Rule:
    scope = "every case" if ALL in priorities else "priority " + ", ".join(priorities)
    name = f"no_regressions ({scope})"
    if comparison is None:
        return Rule(name, "not_checked", "no baseline given (--baseline)")
    regressed = [
        f"{c.id} {c.before}→{c.after}"
        for c in comparison.of("regression")
        if ALL in priorities or c.priority in priorities
    ]
    if regressed:
        return Rule(
            name, "broken", f"{len(regressed)} regression(s) against the baseline: {listed(regressed)}"
        )
    return Rule(name, "holds", "no case that passed in the baseline fails or is flaky now")


def _cost(report: Report, most: float) -> Rule:
    line = f"cost ${report.cost:.4f}, at most ${most:.4f}"
    return Rule("max_cost_usd", "holds" if report.cost <= most + 1e-12 else "broken", line)
