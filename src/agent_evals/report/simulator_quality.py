"""How good the simulated users were (pure): per suite and per user model, the share of checked
conversations with a finding of the user checks, by check.

Every conversation counts, re-runs of invalid rows and the attempts they replaced included: it
measures the simulator, not the agent; so do the conversations that broke off on the simulated
user (an error of kind ``user_simulator``: its model failed, its reply was cut off), counted
apart. Fixed user messages are not checked and are left out (the report says how many); so
are rows without a run record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from agent_evals.report.model import SimulatorQuality
from agent_evals.report.rows import Row

UNKNOWN_MODEL = "(unknown model)"


def simulator_quality(rows: Sequence[Row], suites: Mapping[str, str | None]) -> list[SimulatorQuality]:
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if row.user.checked or _broke_off(row):
            suite = suites.get(row.eval_id) or row.eval_id
            groups.setdefault((suite, row.user.model or UNKNOWN_MODEL), []).append(row)
    out = []
    for (suite, model), members in sorted(groups.items()):
        checked = [row for row in members if row.user.checked]
        by_check: Counter[str] = Counter()
        for row in checked:
            by_check.update(row.user.findings)
        out.append(SimulatorQuality(
            suite=suite,
            user_model=model,
            conversations=len(checked),
            flagged=sum(1 for row in checked if row.user.findings),
            by_check=dict(sorted(by_check.items())),
            undecided=sum(1 for row in checked if row.user.undecided),
            errors=len(members) - len(checked),
        ))
    return out


def _broke_off(row: Row) -> bool:
    """An error of the simulated user itself (its model failed, its reply was cut off)."""
    return row.outcome == "error" and row.error_kind == "user_simulator"


def quality_lines(quality: Sequence[SimulatorQuality], fixed_rows: int = 0) -> list[str]:
    """``tickets, user gpt-4.1-mini: 3 of 40 checked conversation(s) flagged (8%)``, then (indented)
    ``invented_fact 2 (5%), ended_early 1 (3%)`` and the checks that could not decide."""
    lines = []
    for q in quality:
        lines.append(f"{q.suite}, user {q.user_model}: {q.flagged} of {q.conversations} checked conversation(s) "
                     f"flagged ({q.share:.0%})")
        if q.by_check:
            lines.append("  " + ", ".join(f"{check} {n} ({n / q.conversations:.0%})" for check, n in q.by_check.items()))
        if q.undecided:
            lines.append(f"  {q.undecided} conversation(s) with a check that could not decide")
        if q.errors:
            lines.append(f"  {q.errors} conversation(s) broke off on the simulated user (its model failed or "
                         "its reply was cut off)")
    if fixed_rows:
        lines.append(f"{fixed_rows} row(s) with fixed user messages: no user checks apply")
    return lines
