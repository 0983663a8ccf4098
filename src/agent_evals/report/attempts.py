"""Invalid rows and their re-runs (pure): which rows count, and the history of each spoiled run.

``agent-evals run --rerun-invalid N`` runs a suite's invalid rows again, as evals of their own
(``attempt`` 2, 3, … in the run manifest). Each row of a re-run takes the place of one invalid
row of the same case from the attempt before; the replaced rows are kept as the run's earlier
attempts. So a run that was invalid once and then passed counts as one pass; one that was
invalid on every attempt counts once, as invalid, with all its attempts listed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agent_evals.report.model import InvalidRun
from agent_evals.report.rows import Row

Chain = list[Row]  # the attempts of one run, oldest first; the last one counts


def with_attempts(rows: Sequence[Row], attempt_of: Mapping[str, int]) -> list[Row]:
    """The rows with the attempt of their eval (from the run manifests)."""
    if not any(n > 1 for n in attempt_of.values()):
        return list(rows)
    return [row._replace(attempt=attempt_of.get(row.eval_id, 1)) for row in rows]


def chains(rows: Sequence[Row]) -> list[Chain]:
    """The runs, in the order their first attempt appears: each a chain of attempts."""
    out: list[Chain] = []
    open_by_case: dict[tuple[str, str], list[Chain]] = {}
    for row in sorted(rows, key=lambda r: r.attempt):  # stable: the rows' order within an attempt stays
        key = (row.provider, row.case_id)
        waiting = open_by_case.setdefault(key, [])
        chain = next((c for c in waiting if c[-1].outcome == "invalid" and c[-1].attempt < row.attempt), None)
        if chain is None or row.attempt == 1:
            chain = []
            out.append(chain)
            waiting.append(chain)
        chain.append(row)
    return out


def invalid_runs(runs: Sequence[Chain], suites: Mapping[str, str | None]) -> list[InvalidRun]:
    """Every run with an invalid attempt: its first invalid reason, its attempts, how it ended."""
    out = []
    for chain in runs:
        spoiled = [row for row in chain if row.outcome == "invalid"]
        if not spoiled:
            continue
        first = spoiled[0]
        reason = first.user.first or (first.error or "").removeprefix(f"[user_simulator] invalid: {first.case_id} ")
        out.append(InvalidRun(first.case_id, first.provider, reason, len(chain), chain[-1].outcome,
                              suites.get(first.eval_id)))
    return out
