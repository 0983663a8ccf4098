"""``$fixture.<key>.<field>``: a case's text or check config naming a value of one of its fixtures.

The portal makes a case's fixtures anew in every run (new ids, new URLs), so the case names
their values instead of writing them: ``"Why did $fixture.failing.url fail?"`` in a user
message, ``args: {id: $fixture.failing.id}`` in a check's config. A reference that is the
whole value keeps the value's type (``12``, not ``"12"``); inside text it is its text.
Standard library only: assertion processes import it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from agent_evals.record.ends import KitError

REFERENCE = re.compile(r"\$fixture\.([A-Za-z]\w*)\.(\w+)")


class FixtureReferenceError(KitError, ValueError):
    """A ``$fixture.<key>.<field>`` that names no fixture or no field of it (kind ``config``)."""

    kind = "config"


def fill_references(value: Any, fixtures: Sequence[Mapping[str, Any]]) -> Any:
    """``value`` (a text, or lists and mappings of them) with each ``$fixture.<key>.<field>`` replaced."""
    if isinstance(value, str):
        if "$fixture." not in value:
            return value
        whole = REFERENCE.fullmatch(value)
        if whole is not None:
            return _lookup(whole, fixtures)
        return REFERENCE.sub(lambda match: str(_lookup(match, fixtures)), value)
    if isinstance(value, list):
        return [fill_references(v, fixtures) for v in value]
    if isinstance(value, Mapping):
        return {k: fill_references(v, fixtures) for k, v in value.items()}
    return value


def references(value: Any) -> list[str]:
    """Every ``$fixture.<key>.<field>`` in ``value``."""
    if isinstance(value, str):
        return [m.group(0) for m in REFERENCE.finditer(value)]
    if isinstance(value, list):
        return [r for v in value for r in references(v)]
    if isinstance(value, Mapping):
        return [r for v in value.values() for r in references(v)]
    return []


def _lookup(match: re.Match[str], fixtures: Sequence[Mapping[str, Any]]) -> Any:
    key, field = match.group(1), match.group(2)
    fixture = next((f for f in fixtures if isinstance(f, Mapping) and f.get("key") == key), None)
    if fixture is None:
        keys = ", ".join(str(f["key"]) for f in fixtures if isinstance(f, Mapping) and f.get("key")) or "none"
        raise FixtureReferenceError(f"{match.group(0)}: the case has no fixture with key {key!r} (keys: {keys})")
    if field not in fixture or isinstance(fixture[field], (dict, list)):
        fields = ", ".join(k for k, v in fixture.items() if not isinstance(v, (dict, list)) and k != "key")
        raise FixtureReferenceError(f"{match.group(0)}: fixture {key!r} has no field {field!r} (fields: {fields})")
    return fixture[field]
