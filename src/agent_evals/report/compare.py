"""A report against a baseline: per case what changed, per metric how much (pure).

Cases are matched by provider and case id; when the two sides share no provider and each
has exactly one, by case id alone (comparing two instruction files or models run as two
evals). A case's change:

- ``regression``: it passed every graded run in the baseline, now it fails or is flaky;
- ``improvement``: it failed or was flaky in the baseline, now it passes;
- ``changed``: another change of verdict (flaky to fail, fail to flaky);
- ``same``; ``new`` (only now); ``removed`` (only in the baseline);
- ``no_verdict``: one side has no graded run (only errors, invalid or incomplete rows).

A baseline with no case in common is refused (:class:`ReportInputError`), and so is one of
another suite or agent (:mod:`agent_evals.report.baseline_match`), or one graded by other versions of
the checks (:mod:`agent_evals.report.grader_diff`) unless asked. How strong the evidence of
each change is — exact tests per case and per group — is :mod:`agent_evals.report.evidence`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from agent_evals.report.baseline_match import refuse_foreign
from agent_evals.report.errors import ReportInputError
from agent_evals.report.evidence import EvidenceReport, weigh
from agent_evals.report.grader_diff import GraderChange, grader_changes
from agent_evals.report.model import Blessing, CaseSummary, Direction, MetricSummary, Report, RunLabel, Verdict

ChangeKind = Literal["regression", "improvement", "changed", "same", "new", "removed", "no_verdict"]
CHANGE_KINDS: tuple[ChangeKind, ...] = get_args(ChangeKind)
MatchedBy = Literal["provider_and_id", "id"]
EPSILON = 1e-9


@dataclass(frozen=True)
class CaseChange:
    id: str
    provider: str
    priority: str | None
    group: str | None
    change: ChangeKind
    before: Verdict | None
    after: Verdict | None
    pass_hat_k_before: float | None
    pass_hat_k_after: float | None


@dataclass(frozen=True)
class MetricChange:
    name: str
    direction: Direction
    before: float | None
    after: float | None
    delta: float | None
    worse: bool


@dataclass(frozen=True)
class Comparison:
    current: RunLabel
    baseline: RunLabel
    matched_by: MatchedBy
    cases: tuple[CaseChange, ...]
    metrics: tuple[MetricChange, ...]
    evidence: EvidenceReport | None = None
    baseline_blessed: Blessing | None = None
    baseline_created: str | None = None  # the newest eval of the baseline, when it has no blessing
    grader_changes: tuple[GraderChange, ...] = ()  # compared anyway (--across-grader-versions)

    def of(self, change: ChangeKind) -> tuple[CaseChange, ...]:
        return tuple(case for case in self.cases if case.change == change)


def compare(current: Report, baseline: Report, *, across_grader_versions: bool = False) -> Comparison:
    """The comparison; refused (:class:`ReportInputError`) when nothing matches, the baseline is of
    another suite or agent, or the graders differ (unless ``across_grader_versions``)."""
    matched_by, key = _matching(current, baseline)
    refuse_foreign(current, baseline, matched_by)
    before = {key(case): case for case in baseline.cases}
    after = {key(case): case for case in current.cases}
    changed = grader_changes((before[k], after[k]) for k in after if k in before)
    if changed and not across_grader_versions:
        raise ReportInputError(
            "the graders differ from the baseline's, so their verdicts are not comparable: "
            + "; ".join(change.line() for change in changed)
            + ". Compare anyway with --across-grader-versions, or regrade the baseline with today's checks "
            "(agent-evals regrade)"
        )
    changes = [_change(after[k], before.get(k)) for k in after]
    changes += [_removed(before[k]) for k in before if k not in after]
    return Comparison(
        current=current.label,
        baseline=baseline.label,
        matched_by=matched_by,
        cases=tuple(changes),
        metrics=tuple(_metric_changes(current.metrics, baseline.metrics)),
        evidence=weigh([(before[k], after[k]) for k in after if k in before]),
        baseline_blessed=baseline.blessed,
        baseline_created=max((e.created_at for e in baseline.evals if e.created_at), default=None),
        grader_changes=tuple(changed),
    )


def change_of(before: Verdict, after: Verdict) -> ChangeKind:
    if {before, after} & {"error", "invalid", "incomplete"}:  # a side without a graded run
        return "no_verdict"
    if before == "pass" and after in ("fail", "flaky"):
        return "regression"
    if before in ("fail", "flaky") and after == "pass":
        return "improvement"
    return "same" if before == after else "changed"


def _matching(current: Report, baseline: Report) -> tuple[MatchedBy, Any]:
    def by_both(case: CaseSummary) -> tuple[str, str]:
        return case.key

    def by_id(case: CaseSummary) -> str:
        return case.id

    if {c.key for c in current.cases} & {c.key for c in baseline.cases}:
        return "provider_and_id", by_both
    now, then = {c.provider for c in current.cases}, {c.provider for c in baseline.cases}
    if len(now) == 1 and len(then) == 1 and {c.id for c in current.cases} & {c.id for c in baseline.cases}:
        return "id", by_id
    raise ReportInputError(
        f"the baseline has no case in common with the current results "
        f"(baseline: {_describe(baseline)}; current: {_describe(current)})"
    )


def _describe(report: Report) -> str:
    ids = sorted({c.id for c in report.cases})
    shown = ", ".join(ids[:4]) + (", …" if len(ids) > 4 else "")
    providers = ", ".join(sorted({c.provider for c in report.cases})) or "none"
    return f"{len(report.cases)} case(s) ({shown or 'none'}) of provider {providers}"


def _change(now: CaseSummary, then: CaseSummary | None) -> CaseChange:
    kind: ChangeKind = "new" if then is None else change_of(then.verdict, now.verdict)
    return CaseChange(
        now.id,
        now.provider,
        now.priority,
        now.group,
        kind,
        then.verdict if then else None,
        now.verdict,
        then.pass_hat_k if then else None,
        now.pass_hat_k,
    )


def _removed(then: CaseSummary) -> CaseChange:
    return CaseChange(
        then.id,
        then.provider,
        then.priority,
        then.group,
        "removed",
        then.verdict,
        None,
        then.pass_hat_k,
        None,
    )


def _metric_changes(now: tuple[MetricSummary, ...], then: tuple[MetricSummary, ...]) -> list[MetricChange]:
    after = {m.name: m for m in now}
    before = {m.name: m for m in then}
    changes = []
    for name in sorted(after.keys() | before.keys()):
        a, b = after.get(name), before.get(name)
        direction = after[name].direction if a is not None else before[name].direction
        a_mean, b_mean = (a.mean if a else None), (b.mean if b else None)
        delta = a_mean - b_mean if a_mean is not None and b_mean is not None else None
        worse = delta is not None and (delta < -EPSILON if direction == "higher" else delta > EPSILON)
        changes.append(MetricChange(name, direction, b_mean, a_mean, delta, worse))
    return changes
