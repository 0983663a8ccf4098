"""The report's lines about the simulated user (pure): the runs it spoiled (invalid: left out of
pass^k and of the gate's counts, listed apart with their re-runs) and how often each simulator
did (simulator quality). Shared by the terminal, markdown and short formats."""

from __future__ import annotations

from agent_evals.report.model import InvalidRun, Report
from agent_evals.report.simulator_quality import quality_lines

MAX_LISTED = 8


def invalid_lines(report: Report, *, limit: int = MAX_LISTED) -> list[str]:
    """``invalid: 2 run(s) …`` and one line per spoiled run (``C07 turn 2, the user invented … — 3 attempts``)."""
    runs = report.invalid_runs
    if not runs:
        return []
    still = sum(1 for run in runs if run.outcome == "invalid")
    rerun = len(runs) - still
    head = f"invalid: {still} run(s) spoiled by the simulated user, left out of pass^k" + (
        f"; {rerun} re-run to a pass or fail" if rerun else ""
    )
    lines = [head, *[f"  {run_line(run)}" for run in runs[:limit]]]
    if len(runs) > limit:
        lines.append(f"  … and {len(runs) - limit} more")
    return lines


def run_line(run: InvalidRun) -> str:
    """``C09 turn 2, the user invented …``, with its re-runs first when there were some:
    ``C09 (invalid on all 3 attempts) turn 2, …``, ``C07 (re-run: pass on attempt 2) turn 2, …``."""
    if run.attempts == 1:
        attempts = ""
    elif run.outcome == "invalid":
        attempts = f" (invalid on all {run.attempts} attempts)"
    else:
        attempts = f" (re-run: {run.outcome} on attempt {run.attempts})"
    return f"{run.case_id}{attempts} {run.reason}"


def simulator_lines(report: Report) -> list[str]:
    """The simulator quality per suite and user model (nothing when no conversation was checked)."""
    body = quality_lines(report.simulator, report.fixed_user_rows)
    return ["simulated users (share of conversations the user checks flagged):", *[f"  {line}" for line in body]] if body else []
