"""Which cases each shard runs (pure, deterministic): :func:`plan_shards`.

The unit is a test description: Promptfoo selects a shard's tests by their descriptions, so
tests that share one always go to the same shard, and so do all repeats of a case (Promptfoo
repeats a test where it runs). Without durations the units are dealt round-robin in suite
order, so shard sizes differ by at most one unit and each shard gets a mix of the suite's
groups. With durations (seconds per run, by case id, e.g. from a previous report) the units
go, longest first, to the shard with the least work so far (ties: the lower shard); a case
the durations do not know counts as their mean. Every machine computes the same plan from
the same selection, so shards never overlap and none is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean


@dataclass(frozen=True)
class PlannedCase:
    id: str
    description: str


def plan_shards(
    cases: Sequence[PlannedCase], total: int, durations: Mapping[str, float] | None = None
) -> list[list[int]]:
    """For each shard (index 0 = shard 1), the positions in ``cases`` it runs, ascending."""
    if total < 1:
        raise ValueError(f"a plan needs at least one shard, got {total}")
    units = _units(cases)
    if durations:
        assignment = _by_duration(units, cases, durations, total)
    else:
        assignment = [number % total for number in range(len(units))]
    plan: list[list[int]] = [[] for _ in range(total)]
    for unit, shard in zip(units, assignment, strict=True):
        plan[shard].extend(unit)
    return [sorted(positions) for positions in plan]


def _units(cases: Sequence[PlannedCase]) -> list[list[int]]:
    """Positions grouped by description, in the order of their first case."""
    by_description: dict[str, list[int]] = {}
    for position, case in enumerate(cases):
        by_description.setdefault(case.description, []).append(position)
    return list(by_description.values())


def _by_duration(
    units: list[list[int]], cases: Sequence[PlannedCase], durations: Mapping[str, float], total: int
) -> list[int]:
    known = [float(v) for v in durations.values() if v is not None and v >= 0]
    fallback = fmean(known) if known else 1.0
    weights = [sum(_weight(cases[p].id, durations, fallback) for p in unit) for unit in units]
    loads = [0.0] * total
    assignment = [0] * len(units)
    for number in sorted(range(len(units)), key=lambda n: (-weights[n], units[n][0])):
        shard = min(range(total), key=lambda s: (loads[s], s))
        assignment[number] = shard
        loads[shard] += weights[number]
    return assignment


def _weight(case_id: str, durations: Mapping[str, float], fallback: float) -> float:
    value = durations.get(case_id)
    return float(value) if value is not None and value >= 0 else fallback
