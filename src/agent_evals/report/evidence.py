"""How strong the evidence of a change is, per case and per group (pure).

The baseline comparison (:mod:`agent_evals.report.compare`) says what changed; this module
says whether the runs show it. For each case with graded runs on both sides, Fisher's exact
test (:mod:`agent_evals.report.stats`) gives the one-sided p-value that the current runs are
this bad (or this good) if nothing changed, and Newcombe's 95% interval of the change of pass
rate. The tier:

- ``regression``: significantly worse, family-wise at ``alpha`` (default 0.05) over the cases
  compared (Tarone–Bonferroni: only cases that could reach significance count, and the pooled
  test of all of them is one more member of the family), so 50 cases do not give 50 chances of
  a false alarm;
- ``likely_regression``: not that, but worse for this case alone at ``likely`` (default 0.2):
  worth a look, not proof (3 runs a side: pass 3 of 3 → 1 of 3 is p = 0.2);
- ``improvement``: significantly better, family-wise, the same way;
- ``no_evidence``: no evidence either way (also a case without a graded run on a side).

Per group (each ``group``, each ``priority``, and all cases) the exact stratified test pools
the cases' runs, each case keeping its own margins: it finds a drop spread over many cases that
no case shows alone; one test per group at ``alpha``, and ``likely`` as above.

A baseline case with fewer than ``min_runs`` (default 3) graded runs is *unreliable*: with 1
run a side no result can be significant (pass → fail is p = 0.5), so it is named as such.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from agent_evals.report.model import CaseSummary
from agent_evals.report.stats import Family, Table, Tails, fisher, newcombe, stratified, tarone_bonferroni

Tier = Literal["regression", "likely_regression", "improvement", "no_evidence"]
TIERS: tuple[Tier, ...] = get_args(Tier)
GroupKind = Literal["all", "priority", "group"]
ALPHA = 0.05
LIKELY = 0.2
MIN_RUNS = 3
NO_GROUP = "(none)"


@dataclass(frozen=True)
class Evidence:
    """The test of one case or one group: its tier, p-values, runs and interval."""

    tier: Tier
    worse: float | None  # one-sided p: the current runs this bad or worse if nothing changed
    better: float | None
    passed_before: int
    runs_before: int  # graded runs
    passed_after: int
    runs_after: int
    interval: tuple[float, float] | None  # 95% interval of (pass rate now - pass rate before)
    note: str | None = None

    @property
    def rates(self) -> str:
        return f"{self.passed_before}/{self.runs_before} → {self.passed_after}/{self.runs_after}"


@dataclass(frozen=True)
class CaseEvidence:
    id: str
    provider: str
    priority: str | None
    group: str | None
    evidence: Evidence
    unreliable: bool = False  # the baseline has fewer than min_runs graded runs


@dataclass(frozen=True)
class GroupEvidence:
    kind: GroupKind
    name: str
    cases: int  # cases with graded runs on both sides
    evidence: Evidence


@dataclass(frozen=True)
class EvidenceReport:
    alpha: float
    likely: float
    min_runs: int
    worse_family: Family  # the threshold a case's (or all cases') 'worse' p must meet
    better_family: Family
    cases: tuple[CaseEvidence, ...]
    groups: tuple[GroupEvidence, ...]

    def of(self, tier: Tier) -> tuple[CaseEvidence, ...]:
        return tuple(case for case in self.cases if case.evidence.tier == tier)

    @property
    def unreliable(self) -> tuple[CaseEvidence, ...]:
        return tuple(case for case in self.cases if case.unreliable)


Pair = tuple[CaseSummary, CaseSummary]  # (baseline, current) of one case


def weigh(pairs: Sequence[Pair], *, alpha: float = ALPHA, likely: float = LIKELY, min_runs: int = MIN_RUNS) -> EvidenceReport:
    """The evidence of every matched case and group."""
    tables = [_table(before, after) for before, after in pairs]
    tails = [fisher(t) if t is not None else None for t in tables]
    graded = [(t, p) for t, p in zip(tables, tails, strict=True) if t is not None and p is not None]
    pooled = stratified([t for t, _ in graded])
    worse = tarone_bonferroni([p.least_worse for _, p in graded] + [pooled.least_worse], alpha)
    better = tarone_bonferroni([p.least_better for _, p in graded] + [pooled.least_better], alpha)
    cases = tuple(
        CaseEvidence(after.id, after.provider, after.priority, after.group,
                     _case_evidence(table, tail, worse, better, likely), before.passed + before.failed < min_runs)
        for (before, after), table, tail in zip(pairs, tables, tails, strict=True)
    )
    groups = [_group("all", "all", pairs, alpha, likely)]
    splits: tuple[tuple[GroupKind, Callable[[CaseSummary], str]], ...] = (("priority", _priority), ("group", _group_name))
    for kind, by in splits:
        for name in sorted({by(after) for _, after in pairs}):
            members = [pair for pair in pairs if by(pair[1]) == name]
            groups.append(_group(kind, name, members, alpha, likely))
    return EvidenceReport(alpha, likely, min_runs, worse, better, cases, tuple(groups))


def _priority(case: CaseSummary) -> str:
    return case.priority or NO_GROUP


def _group_name(case: CaseSummary) -> str:
    return case.group or NO_GROUP


def _table(before: CaseSummary, after: CaseSummary) -> Table | None:
    if before.passed + before.failed == 0 or after.passed + after.failed == 0:
        return None
    return Table(before.passed, before.passed + before.failed, after.passed, after.passed + after.failed)


def _case_evidence(table: Table | None, tails: Tails | None, worse: Family, better: Family, likely: float) -> Evidence:
    if table is None or tails is None:
        return Evidence("no_evidence", None, None, 0, 0, 0, 0, None, "no graded run on one side (errors only)")
    tier = _tier(tails, worse.significant, better.significant, likely)
    return _evidence(tier, tails, table)


def _tier(tails: Tails, worse: Callable[[float], bool], better: Callable[[float], bool], likely: float) -> Tier:
    if worse(tails.worse):
        return "regression"
    if better(tails.better):
        return "improvement"
    return "likely_regression" if tails.worse <= likely else "no_evidence"


def _evidence(tier: Tier, tails: Tails, table: Table) -> Evidence:
    return Evidence(tier, tails.worse, tails.better, table.passed_before, table.runs_before, table.passed_after,
                    table.runs_after, newcombe(table))


def _group(kind: GroupKind, name: str, pairs: Sequence[Pair], alpha: float, likely: float) -> GroupEvidence:
    tables = [t for t in (_table(b, a) for b, a in pairs) if t is not None]
    if not tables:
        empty = Evidence("no_evidence", None, None, 0, 0, 0, 0, None, "no case with graded runs on both sides")
        return GroupEvidence(kind, name, 0, empty)
    tails = stratified(tables)
    pooled = Table(sum(t.passed_before for t in tables), sum(t.runs_before for t in tables),
                   sum(t.passed_after for t in tables), sum(t.runs_after for t in tables))
    tier = _tier(tails, lambda p: p <= alpha, lambda p: p <= alpha, likely)
    return GroupEvidence(kind, name, len(tables), _evidence(tier, tails, pooled))


@dataclass(frozen=True)
class ScopeVerdict:
    """The gate's test of one scope: its cases each, and their runs pooled, as one family."""

    family: Family
    worse: tuple[tuple[CaseEvidence, float], ...]  # the cases significantly worse, with their p
    pooled: Evidence  # the scope's cases pooled (the exact stratified test)
    pooled_worse: bool
    cases: int  # cases with graded runs on both sides


def judge_scope(cases: Sequence[CaseEvidence], alpha: float) -> ScopeVerdict:
    """Tarone–Bonferroni over the scope's cases and its pooled test (the gate's family)."""
    graded = [(case, _table_of(case.evidence)) for case in cases if case.evidence.runs_before and case.evidence.runs_after]
    tails = [(case, table, fisher(table)) for case, table in graded]
    pooled = stratified([table for _, table, _ in tails])
    family = tarone_bonferroni([p.least_worse for _, _, p in tails] + [pooled.least_worse], alpha)
    worse = tuple((case, p.worse) for case, _, p in tails if family.significant(p.worse))
    total = Table(sum(t.passed_before for _, t, _ in tails), sum(t.runs_before for _, t, _ in tails),
                  sum(t.passed_after for _, t, _ in tails), sum(t.runs_after for _, t, _ in tails))
    tier: Tier = "regression" if tails and family.significant(pooled.worse) else "no_evidence"
    return ScopeVerdict(family, worse, _evidence(tier, pooled, total), tier == "regression", len(tails))


def _table_of(evidence: Evidence) -> Table:
    return Table(evidence.passed_before, evidence.runs_before, evidence.passed_after, evidence.runs_after)
