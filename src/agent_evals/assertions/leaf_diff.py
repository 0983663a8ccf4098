"""Leaf-by-leaf differences between two JSON documents.

A leaf is a scalar or an empty object/array, addressed by its JSON Pointer. Arrays are
compared by index (removing the first element changes every later index). Leaves
compare with `values.scalars_equal` (``1`` equals ``1.0``, ``true`` is not ``1``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agent_evals.assertions.json_pointer import child
from agent_evals.assertions.values import MISSING, render, scalars_equal

ChangeKind = Literal["added", "removed", "changed"]
_SIGN: dict[str, str] = {"added": "+", "removed": "-", "changed": "~"}


@dataclass(frozen=True)
class Change:
    """One leaf that differs: ``before``/``after`` are MISSING for added/removed leaves."""

    path: str
    kind: ChangeKind
    before: Any
    after: Any

    def describe(self) -> str:
        """``+ /a: 1``, ``- /a: 1`` or ``~ /a: 1 → 2``."""
        sign = _SIGN[self.kind]
        if self.kind == "added":
            return f"{sign} {self.path}: {render(self.after)}"
        if self.kind == "removed":
            return f"{sign} {self.path}: {render(self.before)}"
        return f"{sign} {self.path}: {render(self.before)} → {render(self.after)}"


def leaves(document: Any, base: str = "") -> dict[str, Any]:
    """Every leaf of ``document`` by pointer, in document order (MISSING gives no leaves)."""
    if document is MISSING:
        return {}
    found: dict[str, Any] = {}
    if isinstance(document, Mapping) and document:
        for key, value in document.items():
            found.update(leaves(value, child(base, key)))
    elif isinstance(document, list) and document:
        for index, value in enumerate(document):
            found.update(leaves(value, child(base, index)))
    else:
        found[base] = document
    return found


def diff(before: Any, after: Any, base: str = "") -> list[Change]:
    """The changed leaves: ``before``'s order first, then leaves only ``after`` has."""
    old, new = leaves(before, base), leaves(after, base)
    changes: list[Change] = []
    for path, value in old.items():
        if path not in new:
            changes.append(Change(path, "removed", value, MISSING))
        elif not scalars_equal(value, new[path]):
            changes.append(Change(path, "changed", value, new[path]))
    changes += [Change(path, "added", MISSING, value) for path, value in new.items() if path not in old]
    return changes
