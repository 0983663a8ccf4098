"""Is the run complete? No errors, nothing interrupted, every selected case ran (pure).

With the kit's run manifest an eval is complete when its suite's run finished without an
interrupt and every selected case has ``repeat × providers`` rows. Without one, when the
eval finished (Promptfoo stored its duration, or the ``-o`` file has its stats). Either
way an error row makes the run incomplete, and so does an incomplete row (a check that decides
it could not be graded), a report with no row at all, and a sharded run of which a planned
shard is missing (:mod:`agent_evals.report.shard_info`). An invalid row (the simulated user
spoiled it) does not: it is counted and listed apart, and the gate may limit it (``max_invalid``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from agent_evals.report.model import EvalInfo, RunInfo
from agent_evals.report.rows import Row
from agent_evals.report.shard_info import missing_shards

MAX_LISTED = 5


def incompleteness(evals: Sequence[EvalInfo], runs: Sequence[RunInfo], rows: Sequence[Row]) -> list[str]:
    """Why the run is not complete, one line per reason; empty when it is."""
    reasons: list[str] = []
    if not rows:
        reasons.append("no result rows")
    errors = Counter(row.error_kind or "unknown" for row in rows if row.outcome == "error")
    if errors:
        kinds = ", ".join(f"{kind} {count}" for kind, count in errors.most_common())
        reasons.append(f"{sum(errors.values())} error row(s) ({kinds})")
    ungraded = sum(1 for row in rows if row.outcome == "incomplete")
    if ungraded:
        reasons.append(f"{ungraded} incomplete row(s) (a check that decides the row could not be graded)")
    for run in runs:
        reasons += _run_reasons(run)
    for info in evals:
        reasons += _eval_reasons(info, [row for row in rows if row.eval_id == info.eval_id])
    return reasons + missing_shards(evals)


def _run_reasons(run: RunInfo) -> list[str]:
    reasons = []
    if run.interrupted:
        reasons.append(f"run {run.run_id} was interrupted")
    elif not run.finished:
        reasons.append(
            f"run {run.run_id} "
            + ("is still running" if run.alive else "did not finish (its process is gone)")
        )
    if run.suites_not_run:
        reasons.append(f"run {run.run_id}: suite(s) {', '.join(run.suites_not_run)} did not run")
    return reasons


def _eval_reasons(info: EvalInfo, rows: Sequence[Row]) -> list[str]:
    name = f"eval {info.eval_id}" + (f" ({info.suite})" if info.suite else "")
    reasons = []
    if info.interrupted:
        reasons.append(f"{name} was interrupted")
    elif not info.finished:
        reasons.append(f"{name} did not finish (interrupted or still running)")
    if info.selected is not None:
        reasons += _missing_runs(name, info, rows)
    return reasons


def _missing_runs(name: str, info: EvalInfo, rows: Sequence[Row]) -> list[str]:
    """Selected cases with fewer rows than planned: ``repeat × providers``, or with
    ``--repeat-until-decided`` the runs the rounds gave each case (× providers)."""
    providers = info.providers or 1
    planned = (info.until_decided or {}).get("planned") or {}
    counts = Counter(row.case_id for row in rows)
    short = []
    for case in info.selected or ():
        expected = int(planned.get(case, 0) if planned else info.repeat or 1) * providers
        if counts.get(case, 0) < max(expected, 1):
            short.append((case, counts.get(case, 0), max(expected, 1)))
    if not short:
        return []
    shown = ", ".join(f"{case} {ran}/{expected}" for case, ran, expected in short[:MAX_LISTED])
    more = f", and {len(short) - MAX_LISTED} more" if len(short) > MAX_LISTED else ""
    fewest = min(expected for _, _, expected in short)
    return [f"{name}: {len(short)} selected case(s) ran fewer than {fewest} time(s): {shown}{more}"
            if len({e for _, _, e in short}) == 1 else
            f"{name}: {len(short)} selected case(s) ran fewer times than planned: {shown}{more}"]
