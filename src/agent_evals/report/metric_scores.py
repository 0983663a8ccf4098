"""Per named metric: the mean score, the pass rate of its assertions, its direction (pure).

Every score the kit's assertions name is better when higher (1.0 on a perfect run; the
table is in ``docs/report.md``). The two counts older results carry, ``collateral_changes``
and ``schema_errors``, are better when lower. Error rows have no scores and are left out;
so are scores of weight 0 (not graded).
"""

from __future__ import annotations

from collections.abc import Iterable
from statistics import fmean

from agent_evals.report.model import Direction, MetricSummary
from agent_evals.report.rows import Row

LOWER_IS_BETTER = frozenset({"collateral_changes", "schema_errors"})


def direction(metric: str) -> Direction:
    return "lower" if metric in LOWER_IS_BETTER else "higher"


def summarize_metrics(rows: Iterable[Row]) -> list[MetricSummary]:
    """One summary per named score or assertion metric seen in graded rows, by name."""
    scores: dict[str, list[float]] = {}
    checks: dict[str, list[bool]] = {}
    for row in rows:
        if row.outcome in ("error", "invalid"):  # not graded runs of the agent
            continue
        for name, value in row.named_scores.items():
            scores.setdefault(name, []).append(value)
        for check in row.checks:
            checks.setdefault(check.metric, []).append(check.passed)
    return [
        MetricSummary(
            name=name,
            direction=direction(name),
            mean=fmean(scores[name]) if name in scores else None,
            pass_rate=fmean(checks[name]) if name in checks else None,
            rows=max(len(scores.get(name, ())), len(checks.get(name, ()))),
        )
        for name in sorted(scores.keys() | checks.keys())
    ]
