"""Tool names and name patterns: a pattern is an exact name or an ``fnmatch`` glob.

Matching is case-sensitive (``fnmatchcase``): tool names are identifiers.
``*`` matches any run of characters, ``?`` one character, ``[abc]`` one of a set.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

_GLOB_CHARS = frozenset("*?[")


def is_glob(pattern: str) -> bool:
    """True when ``pattern`` has a glob character (``*``, ``?`` or ``[``)."""
    return any(char in _GLOB_CHARS for char in pattern)


def name_matches(name: str, pattern: str) -> bool:
    """True when the tool ``name`` matches ``pattern`` (exact name or glob)."""
    return name == pattern or (is_glob(pattern) and fnmatchcase(name, pattern))


def first_match(name: str, patterns: Iterable[str]) -> str | None:
    """The first pattern ``name`` matches, or None."""
    return next((pattern for pattern in patterns if name_matches(name, pattern)), None)


def count_label(names: Iterable[str]) -> str:
    """``a, b ×2, c``: names in first-seen order with repeat counts."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(name if count == 1 else f"{name} ×{count}" for name, count in counts.items())
