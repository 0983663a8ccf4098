"""Checking a submitted document against its source and a list of expected changes.

``expected_changes`` maps JSON Pointers (into the source's layout) to values:

* a scalar: the leaf at the pointer is set (added or changed) to it;
* an object or array: the subtree at the pointer becomes exactly this value (all its
  leaves; leaves of the old subtree that are not in it are removed);
* the marker `REMOVED` (``"$removed"``): the value at the pointer (leaf or subtree) is
  removed. Removing an array element shifts the later elements, so such an entry
  covers the whole array.

The expected document is the source with every entry applied (sets first, then
removals, later array indices first). An entry is *made* when the submitted document
equals the expected one inside the entry's scope, *missing* when the submitted scope
still equals the source, else *wrong*. Every other changed leaf, outside all scopes and
``ignore`` patterns, is a *collateral* change.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

from agent_evals.assertions.json_pointer import (
    PointerError,
    is_within,
    parent,
    parse,
    remove,
    resolve,
    set_value,
)
from agent_evals.assertions.leaf_diff import Change, diff
from agent_evals.assertions.names import is_glob
from agent_evals.assertions.values import MISSING, render, values_equal

REMOVED = "$removed"
EntryStatus = Literal["made", "missing", "wrong"]


@dataclass(frozen=True)
class ExpectedChange:
    """One entry of ``expected_changes``; a malformed pointer raises :class:`PointerError` here."""

    pointer: str
    value: Any

    def __post_init__(self) -> None:
        parse(self.pointer)

    @property
    def removal(self) -> bool:
        return isinstance(self.value, str) and self.value == REMOVED


@dataclass(frozen=True)
class EntryOutcome:
    """How one expected change fared; ``details`` are ``path: expected X, got Y`` lines."""

    change: ExpectedChange
    scope: str
    status: EntryStatus
    expected: Any
    actual: Any
    source: Any
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChangeReport:
    entries: tuple[EntryOutcome, ...]
    collateral: tuple[Change, ...]

    @property
    def made(self) -> int:
        return sum(1 for entry in self.entries if entry.status == "made")

    @property
    def made_fraction(self) -> float:
        """Expected changes made / expected changes (1.0 when none were expected)."""
        return self.made / len(self.entries) if self.entries else 1.0

    @property
    def passed(self) -> bool:
        return self.made == len(self.entries) and not self.collateral

    @property
    def score(self) -> float:
        """made / (expected + collateral): 1.0 only for exactly the expected changes."""
        total = len(self.entries) + len(self.collateral)
        return self.made / total if total else 1.0


def is_ignored(path: str, patterns: Sequence[str]) -> bool:
    """True when ``path`` is under a pointer prefix, or it or an ancestor matches a glob."""
    for pattern in patterns:
        if not is_glob(pattern):
            if is_within(path, pattern):
                return True
            continue
        parts = path.split("/")
        if any(fnmatchcase("/".join(parts[:depth]), pattern) for depth in range(2, len(parts) + 1)):
            return True
    return False


def expected_document(source: Any, changes: Sequence[ExpectedChange]) -> Any:
    """The source with every expected change applied (PointerError if one cannot apply)."""
    document = copy.deepcopy(source)
    for change in changes:
        if not change.removal:
            document = set_value(document, change.pointer, copy.deepcopy(change.value))
    for change in sorted((c for c in changes if c.removal), key=_removal_order, reverse=True):
        if resolve(source, change.pointer, MISSING) is MISSING:
            raise PointerError(f"{change.pointer!r} is {REMOVED} but the source has no {change.pointer}")
        remove(document, change.pointer)
    return document


def check_changes(
    source: Any, submitted: Any, changes: Sequence[ExpectedChange], ignore: Sequence[str] = ()
) -> ChangeReport:
    """Compare ``submitted`` with ``source`` under the expected ``changes``."""
    target = expected_document(source, changes)
    entries = tuple(_outcome(change, _scope(change, source), source, submitted, target) for change in changes)
    scopes = [entry.scope for entry in entries]
    collateral = tuple(
        change
        for change in diff(source, submitted)
        if not any(is_within(change.path, scope) for scope in scopes) and not is_ignored(change.path, ignore)
    )
    return ChangeReport(entries, collateral)


def _scope(change: ExpectedChange, source: Any) -> str:
    if change.removal and change.pointer and isinstance(resolve(source, parent(change.pointer)), list):
        return parent(change.pointer)
    return change.pointer


def _outcome(change: ExpectedChange, scope: str, source: Any, submitted: Any, target: Any) -> EntryOutcome:
    want, got, was = (resolve(doc, scope, MISSING) for doc in (target, submitted, source))
    if values_equal(want, got):
        return EntryOutcome(change, scope, "made", want, got, was)
    if values_equal(was, got):
        return EntryOutcome(change, scope, "missing", want, got, was)
    lines = tuple(
        f"{item.path or '/'}: expected {render(item.before)}, got {render(item.after)}"
        for item in diff(want, got, scope)
    )
    return EntryOutcome(change, scope, "wrong", want, got, was, lines)


def _removal_order(change: ExpectedChange) -> list[tuple[int, int, str]]:
    return [(0, int(token), "") if token.isdigit() else (1, 0, token) for token in parse(change.pointer)]
