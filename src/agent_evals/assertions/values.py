"""Comparing JSON values: numbers by value, booleans apart from numbers, strings optionally caseless.

``compare`` walks an expected value against an actual one and lists every mismatching
path (a JSON Pointer) with the expected and actual values:

* objects: every expected key must match; in ``exact`` mode the actual object may not
  have other keys, in ``subset`` mode it may (at every depth);
* arrays: equal length, element by element in order (each element in the same mode);
* numbers: ``1 == 1.0``; ``true`` is not ``1``;
* strings: exactly, or with ``str.casefold`` when ``ignore_case``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agent_evals.assertions.json_pointer import child

MatchMode = Literal["subset", "exact"]


class _Missing:
    """The absence of a value (a key not present, an array index past the end)."""

    def __repr__(self) -> str:
        return "(absent)"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Mismatch:
    """One difference: ``path`` is a JSON Pointer; ``expected``/``actual`` may be MISSING."""

    path: str
    expected: Any
    actual: Any
    note: str = ""

    def describe(self) -> str:
        """``/a/b: expected 3, got "3"`` (plus the note, e.g. the array lengths)."""
        text = f"{self.path or '/'}: expected {render(self.expected)}, got {render(self.actual)}"
        return f"{text} ({self.note})" if self.note else text


def render(value: Any, limit: int = 120) -> str:
    """Compact JSON of a value for reasons, shortened to ``limit`` characters."""
    if value is MISSING:
        return "(absent)"
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_number(value: Any) -> bool:
    """int or float, but not bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def scalars_equal(expected: Any, actual: Any, *, ignore_case: bool = False) -> bool:
    """Equality of two leaves (scalars, MISSING or empty containers)."""
    if is_number(expected) or is_number(actual):
        return is_number(expected) and is_number(actual) and expected == actual
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected is actual
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.casefold() == actual.casefold() if ignore_case else expected == actual
    if isinstance(expected, (Mapping, list)) or isinstance(actual, (Mapping, list)):
        return values_equal(expected, actual, ignore_case=ignore_case)
    return expected is actual or (type(expected) is type(actual) and expected == actual)


def values_equal(expected: Any, actual: Any, *, ignore_case: bool = False) -> bool:
    """Deep equality with the rules of this module (no extra keys allowed)."""
    return not compare(expected, actual, mode="exact", ignore_case=ignore_case)


def compare(
    expected: Any, actual: Any, *, mode: MatchMode = "subset", ignore_case: bool = False, path: str = ""
) -> list[Mismatch]:
    """Every mismatch between ``expected`` and ``actual`` (empty when they match)."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return _compare_objects(expected, actual, mode=mode, ignore_case=ignore_case, path=path)
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            note = f"expected {len(expected)} items, got {len(actual)}"
            return [Mismatch(path, expected, actual, note)]
        found: list[Mismatch] = []
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found += compare(want, got, mode=mode, ignore_case=ignore_case, path=child(path, index))
        return found
    if isinstance(expected, (Mapping, list)) or isinstance(actual, (Mapping, list)):
        return [Mismatch(path, expected, actual)]
    return (
        [] if scalars_equal(expected, actual, ignore_case=ignore_case) else [Mismatch(path, expected, actual)]
    )


def _compare_objects(
    expected: Mapping[str, Any], actual: Mapping[str, Any], *, mode: MatchMode, ignore_case: bool, path: str
) -> list[Mismatch]:
    found: list[Mismatch] = []
    for key, want in expected.items():
        here = child(path, key)
        if key not in actual:
            found.append(Mismatch(here, want, MISSING, "missing key"))
        else:
            found += compare(want, actual[key], mode=mode, ignore_case=ignore_case, path=here)
    if mode == "exact":
        found += [
            Mismatch(child(path, key), MISSING, value, "unexpected key")
            for key, value in actual.items()
            if key not in expected
        ]
    return found
