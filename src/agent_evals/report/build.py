"""The whole report from what was read: :func:`build_report` (pure)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from agent_evals.record import AgentInfo
from agent_evals.report.aggregate import (
    group_rows,
    natural_key,
    sum_usage,
    summarize_case,
    summarize_group,
    summarize_groups,
)
from agent_evals.report.attempts import chains, invalid_runs, with_attempts
from agent_evals.report.budget_lines import budget_summary
from agent_evals.report.completeness import incompleteness
from agent_evals.report.failure_patterns import failure_patterns
from agent_evals.report.metric_scores import summarize_metrics
from agent_evals.report.model import EvalInfo, Report, RunInfo, RunLabel
from agent_evals.report.rows import Row
from agent_evals.report.simulator_quality import simulator_quality

TOTAL = "all"


def build_report(
    evals: Sequence[EvalInfo], runs: Sequence[RunInfo], rows: Sequence[Row], *, k: int | None = None
) -> Report:
    """Cases, groups, priorities, metrics, failure patterns and completeness of ``rows``."""
    if k is not None and k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    every_row = with_attempts(rows, {info.eval_id: info.attempt for info in evals})
    runs_of = chains(every_row)
    rows = [chain[-1] for chain in runs_of]  # a re-run of an invalid row takes its place
    superseded = Counter((row.provider, row.case_id) for chain in runs_of for row in chain[:-1])
    by_case = group_rows(rows)
    suites = {info.eval_id: info.suite for info in evals}
    order = {info.eval_id: index for index, info in enumerate(evals)}
    cases = tuple(
        sorted(
            (
                summarize_case(case_rows, k, suites.get(case_rows[0].eval_id), superseded[case_key])
                for case_key, case_rows in by_case.items()
            ),
            key=lambda case: (
                order.get(by_case[case.key][0].eval_id, 0),
                natural_key(case.id),
                case.provider,
            ),
        )
    )
    incomplete = incompleteness(evals, runs, every_row)
    return Report(
        complete=not incomplete,
        incomplete=tuple(incomplete),
        k=k,
        cases=cases,
        groups=tuple(summarize_groups(cases, by_case, lambda case: case.group)),
        priorities=tuple(summarize_groups(cases, by_case, lambda case: case.priority)),
        totals=summarize_group(TOTAL, cases, by_case),
        metrics=tuple(summarize_metrics(rows)),
        patterns=tuple(failure_patterns(rows, label_providers=len({c.provider for c in cases}) > 1)),
        errors_by_kind=dict(Counter(row.error_kind or "unknown" for row in rows if row.outcome == "error")),
        usage=sum_usage(row.usage for row in every_row),  # every attempt was paid for
        evals=tuple(evals),
        runs=tuple(runs),
        label=run_label(evals, rows),
        notes=tuple(_notes(rows, k)),
        budget=budget_summary(evals, runs, rows),
        invalid_runs=tuple(invalid_runs(runs_of, suites)),
        simulator=tuple(simulator_quality(every_row, suites)),
        fixed_user_rows=sum(1 for row in every_row if row.user.fixed),
    )


def run_label(evals: Sequence[EvalInfo], rows: Sequence[Row]) -> RunLabel:
    """The agents (per provider), modes and git revisions the rows ran with."""
    agents: dict[tuple[str, AgentInfo], None] = {}
    for row in rows:
        if row.agent is not None:
            agents[(row.provider, row.agent)] = None
    return RunLabel(
        agents=tuple(agents),
        modes=tuple(sorted({info.mode for info in evals if info.mode})),
        git_revisions=tuple(sorted({info.git_revision for info in evals if info.git_revision})),
        eval_ids=tuple(info.eval_id for info in evals),
    )


def _notes(rows: Sequence[Row], k: int | None) -> list[str]:
    notes = []
    sources = Counter(row.id_source for row in rows)
    if sources["description_id"]:
        notes.append(
            f"{sources['description_id']} row(s) had no case id: the description's leading id was used"
        )
    if sources["description"]:
        notes.append(f"{sources['description']} row(s) had no case id: the whole description was used")
    if sources["index"]:
        notes.append(
            f"{sources['index']} row(s) had neither a case id nor a description: their test index was used"
        )
    if k is not None:
        notes.append(
            f"pass^k with k={k}: C(passes, k)/C(runs, k); errors are not runs (left out of n), nor are invalid "
            "or incomplete rows"
        )
    return notes
