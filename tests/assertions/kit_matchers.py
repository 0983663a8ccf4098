"""Custom argument matchers for tests/assertions/test_argument_rules.py (``tests.assertions.kit_matchers:…``)."""

from __future__ import annotations

from typing import Any


def same_city(actual: Any, expected: Any) -> bool:
    """``"SF"`` and ``"San Francisco"`` are the same city."""
    aliases = {"sf": "san francisco", "nyc": "new york"}
    return aliases.get(str(actual).lower(), str(actual).lower()) == aliases.get(str(expected).lower(), str(expected).lower())


def mentions_upgrade(actual: Any, expected: Any) -> tuple[bool, str]:
    """The whole arguments: the query asks about an upgrade (when the reference does)."""
    if "upgrade" not in str(expected.get("query", "")):
        return True, "the reference asks nothing about upgrades"
    return "upgrade" in str(actual.get("query", "")), "the query must mention an upgrade"


def broken(actual: Any, expected: Any) -> bool:
    raise RuntimeError("the matcher's own bug")
