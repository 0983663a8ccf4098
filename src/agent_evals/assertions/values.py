"""Comparing JSON values: numbers by value, booleans apart from numbers, strings optionally caseless.

``compare`` walks an expected value against an actual one and lists every mismatching
path (a JSON Pointer) with the expected and actual values:

* objects: in ``subset`` mode every expected key must match and the actual object may have
  other keys; in ``exact`` mode it may not (at every depth); in ``within`` mode the actual
  object must lie within the expected one: every key it has is expected, with a matching
  value, and expected keys may be left out (at every depth);
* arrays: equal length, element by element in order (each element in the same mode);
* numbers: ``1 == 1.0``; ``true`` is not ``1``;
* strings: exactly, or with ``str.casefold`` when ``ignore_case``;
* with :class:`~agent_evals.assertions.arg_rules.ArgRules`: ignored paths, default values,
  numeric tolerance and custom matchers (argument_match).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agent_evals.assertions.arg_rules import ArgRules, run_matcher
from agent_evals.assertions.json_pointer import child
from agent_evals.assertions.json_text import MISSING, render

MatchMode = Literal["subset", "exact", "within"]


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
    expected: Any, actual: Any, *, mode: MatchMode = "subset", ignore_case: bool = False, path: str = "",
    rules: ArgRules | None = None,
) -> list[Mismatch]:
    """Every mismatch between ``expected`` and ``actual`` (empty when they match); a custom
    matcher that raises raises :class:`~agent_evals.assertions.arg_rules.MatcherError`."""
    if rules is not None:
        if rules.ignored(path or "/"):
            return []
        if (found_matcher := rules.matcher(path)) is not None:
            name, function = found_matcher
            passed, why = run_matcher(name, function, actual, expected)
            return [] if passed else [Mismatch(path, expected, actual, f"{name}: {why}" if why else f"{name} said no")]
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return _compare_objects(expected, actual, mode=mode, ignore_case=ignore_case, path=path, rules=rules)
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            note = f"expected {len(expected)} items, got {len(actual)}"
            return [Mismatch(path, expected, actual, note)]
        found: list[Mismatch] = []
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found += compare(want, got, mode=mode, ignore_case=ignore_case, path=child(path, index), rules=rules)
        return found
    if isinstance(expected, (Mapping, list)) or isinstance(actual, (Mapping, list)):
        return [Mismatch(path, expected, actual)]
    if rules is not None and is_number(expected) and is_number(actual):
        return [] if rules.close(expected, actual) else [Mismatch(path, expected, actual, "beyond the tolerance")]
    return (
        [] if scalars_equal(expected, actual, ignore_case=ignore_case) else [Mismatch(path, expected, actual)]
    )


def _compare_objects(
    expected: Mapping[str, Any], actual: Mapping[str, Any], *, mode: MatchMode, ignore_case: bool, path: str,
    rules: ArgRules | None,
) -> list[Mismatch]:
    found: list[Mismatch] = []
    for key, want in expected.items():
        here = child(path, key)
        if rules is not None and rules.ignored(here):
            continue
        if key not in actual:
            if mode == "within" or _is_default(rules, here, want, ignore_case):
                continue  # within: the call may leave out reference keys; a key left out equals its default
            found.append(Mismatch(here, want, MISSING, "missing key"))
        else:
            found += compare(want, actual[key], mode=mode, ignore_case=ignore_case, path=here, rules=rules)
    if mode in ("exact", "within"):
        note = "unexpected key" if mode == "exact" else "not in the reference"
        found += [
            Mismatch(child(path, key), MISSING, value, note)
            for key, value in actual.items()
            if key not in expected
            and not (rules is not None and rules.ignored(child(path, key)))
            and not _is_default(rules, child(path, key), value, ignore_case)
        ]
    return found


def _is_default(rules: ArgRules | None, path: str, value: Any, ignore_case: bool) -> bool:
    if rules is None:
        return False
    has, default = rules.default(path)
    return has and not compare(default, value, mode="exact", ignore_case=ignore_case)
