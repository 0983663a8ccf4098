"""Filling a template from one row's values: ``{name}`` placeholders in every string of a
YAML tree (keys stay as written).

* A string that is exactly one placeholder becomes the value itself, of any type (a mapping
  of expected changes, a list, a number); inside longer text a value is written as text
  (a list as ``a, b``, a mapping as ``key: value, …``).
* ``{{`` and ``}}`` stand for literal braces.
* A mapping entry or list item whose whole value is a placeholder that fills to nothing (an
  empty string, an empty mapping or list, null) is left out; an entry with the key ``...``
  whose value fills to a mapping is spread into its parent mapping (``"...": "{tag_facts}"``).
* A placeholder without a value raises :class:`MissingValue` naming it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

SPREAD = "..."
_ONE = re.compile(r"\{([A-Za-z_]\w*)\}")
_PARTS = re.compile(r"\{\{|\}\}|\{([A-Za-z_]\w*)\}")
_EMPTY = object()  # what a whole-string placeholder that fills to nothing gives its parent


class MissingValue(KeyError):
    """A placeholder names a value the row does not have."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def fill(node: Any, values: Mapping[str, Any]) -> Any:
    """``node`` with every placeholder filled from ``values`` (see the module docstring)."""
    result = _fill(node, values)
    return None if result is _EMPTY else result


def _fill(node: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(node, str):
        return _text(node, values)
    if isinstance(node, Mapping):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            filled = _fill(value, values)
            if filled is _EMPTY:
                continue
            if key == SPREAD:
                if not isinstance(filled, Mapping):
                    raise ValueError(f"a '{SPREAD}' entry must fill to a mapping, got {type(filled).__name__}")
                out.update(filled)
            else:
                out[key] = filled
        return out
    if isinstance(node, list):
        return [item for item in (_fill(v, values) for v in node) if item is not _EMPTY]
    return node


def _text(text: str, values: Mapping[str, Any]) -> Any:
    whole = _ONE.fullmatch(text)
    if whole is not None:
        value = _lookup(whole.group(1), values)
        return _EMPTY if value is None or value == "" or value == {} or value == [] else value
    return _PARTS.sub(lambda m: _part(m, values), text)


def _part(match: re.Match[str], values: Mapping[str, Any]) -> str:
    token = match.group(0)
    if token == "{{":
        return "{"
    if token == "}}":
        return "}"
    return as_text(_lookup(match.group(1), values))


def _lookup(name: str, values: Mapping[str, Any]) -> Any:
    if name not in values:
        raise MissingValue(name)
    return values[name]


def as_text(value: Any) -> str:
    """A value written inside text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ", ".join(as_text(v) for v in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {as_text(v)}" for k, v in value.items())
    return str(value)


def placeholders(node: Any) -> set[str]:
    """Every placeholder name used in ``node``."""
    if isinstance(node, str):
        return {m.group(1) for m in _PARTS.finditer(node) if m.group(1)}
    if isinstance(node, Mapping):
        return set().union(*(placeholders(v) for v in node.values())) if node else set()
    if isinstance(node, list):
        return set().union(*(placeholders(v) for v in node)) if node else set()
    return set()
