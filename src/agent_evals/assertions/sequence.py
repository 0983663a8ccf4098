"""Matching a list of tool names against expected names or globs, in five modes.

* ``strict``: exactly the expected calls, in order;
* ``in_order``: the expected calls appear in this order, others may come between;
* ``unordered``: the same calls with the same counts, in any order;
* ``superset``: at least the expected calls (with counts), others allowed;
* ``subset``: no call outside the expected ones, counts not exceeded.

``expected: []`` means "no tool call" in every mode but ``superset``, where it would mean
"anything" (the tool_sequence check refuses it there).

Unordered modes pair calls with patterns one to one (a maximum bipartite matching, so
overlapping globs are paired as well as possible). Each problem is a sentence saying
where expected and actual part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agent_evals.assertions.names import count_label, name_matches

SequenceMode = Literal["strict", "in_order", "unordered", "superset", "subset"]


@dataclass(frozen=True)
class SequenceMatch:
    """Whether the names match, and the problems found (empty when they match)."""

    passed: bool
    problems: tuple[str, ...]


def match_sequence(expected: Sequence[str], actual: Sequence[str], mode: SequenceMode) -> SequenceMatch:
    """Match the ``actual`` tool names against ``expected`` patterns in ``mode``. No expected
    call means no call at all, in every mode that takes it (superset refuses it: it would pass
    every run, see :mod:`agent_evals.assertions.tool_sequence`)."""
    if not expected:
        problems = [f"expected no tool calls, got {len(actual)}: {count_label(actual)}"] if actual else []
        return SequenceMatch(not problems, tuple(problems))
    if mode == "strict":
        problems = _strict(expected, actual)
    elif mode == "in_order":
        problems = _in_order(expected, actual)
    else:
        problems = _unordered(expected, actual, mode)
    return SequenceMatch(not problems, tuple(problems))


def _strict(expected: Sequence[str], actual: Sequence[str]) -> list[str]:
    for index in range(max(len(expected), len(actual))):
        position = index + 1
        if index >= len(actual):
            rest = ", ".join(expected[index:])
            return [f"missing {rest} at position {position} (the agent stopped after {len(actual)} call(s))"]
        if index >= len(expected):
            rest = ", ".join(actual[index:])
            return [f"unexpected {rest} from position {position} (expected only {len(expected)} call(s))"]
        if not name_matches(actual[index], expected[index]):
            return [
                f"first difference at position {position}: expected {expected[index]}, got {actual[index]}"
            ]
    return []


def _in_order(expected: Sequence[str], actual: Sequence[str]) -> list[str]:
    problems = []
    cursor = 0  # first actual index still available
    anchor = ""  # the last matched expected pattern
    used: set[int] = set()  # actual indices matched so far
    for position, pattern in enumerate(expected, start=1):
        found = next((i for i in range(cursor, len(actual)) if name_matches(actual[i], pattern)), None)
        if found is None:
            where = f"after {anchor}" if anchor else "at the start"
            earlier = [i + 1 for i in range(cursor) if i not in used and name_matches(actual[i], pattern)]
            hint = f"; it was called earlier, at call {', '.join(map(str, earlier))}" if earlier else ""
            problems.append(f"missing {pattern} {where} (position {position}{hint})")
            continue
        cursor, anchor = found + 1, pattern
        used.add(found)
    return problems


def _unordered(expected: Sequence[str], actual: Sequence[str], mode: SequenceMode) -> list[str]:
    pairs = _max_matching(expected, actual)  # actual index -> expected index
    used = set(pairs.values())
    missing = [pattern for index, pattern in enumerate(expected) if index not in used]
    extra = [index for index in range(len(actual)) if index not in pairs]
    problems = []
    if missing and mode in ("unordered", "superset"):
        problems.append("missing " + count_label(missing))
    if extra and mode in ("unordered", "subset"):
        problems.append("unexpected " + ", ".join(_extra_label(expected, actual, i) for i in extra))
    return problems


def _extra_label(expected: Sequence[str], actual: Sequence[str], index: int) -> str:
    name = actual[index]
    allowed = sum(1 for pattern in expected if name_matches(name, pattern))
    if allowed:
        return f"{name} (call {index + 1}; more than the {allowed} expected)"
    return f"{name} (call {index + 1}; not expected)"


def _max_matching(expected: Sequence[str], actual: Sequence[str]) -> dict[int, int]:
    """Kuhn's augmenting paths: pair actual calls with expected patterns, as many as possible."""
    owner: dict[int, int] = {}  # expected index -> actual index

    def augment(call: int, seen: set[int]) -> bool:
        for slot, pattern in enumerate(expected):
            if slot in seen or not name_matches(actual[call], pattern):
                continue
            seen.add(slot)
            if slot not in owner or augment(owner[slot], seen):
                owner[slot] = call
                return True
        return False

    for call in range(len(actual)):
        augment(call, set())
    return {call: slot for slot, call in owner.items()}
