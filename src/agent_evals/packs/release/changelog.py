"""A ``CHANGELOG.md`` in the Keep a Changelog form, read into its entries (pure).

An entry starts at a level-2 heading, ``## [2.0.0] - 2025-04-07`` (brackets and date optional;
``## [Unreleased]`` too); its sections at level-3 headings, ``### Added``. The text above the
first entry is the preamble.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ENTRY = re.compile(r"^## +\[?(?P<version>[^\]\s]+)\]?(?: +[-–] +(?P<date>\S+))?\s*$")
_SECTION = re.compile(r"^### +(?P<name>.+?)\s*$")


@dataclass(frozen=True)
class Entry:
    version: str
    date: str | None
    text: str  # the whole entry, heading included
    sections: dict[str, str] = field(default_factory=dict)  # section name -> its text

    @property
    def heading(self) -> str:
        return self.text.splitlines()[0]


@dataclass(frozen=True)
class Changelog:
    preamble: str
    entries: tuple[Entry, ...]

    def versions(self) -> list[str]:
        return [entry.version for entry in self.entries]


def parse_changelog(text: str) -> Changelog:
    lines = text.splitlines(keepends=True)
    starts = [n for n, line in enumerate(lines) if _ENTRY.match(line.rstrip("\n"))]
    preamble = "".join(lines[: starts[0]]) if starts else text
    entries = []
    for position, start in enumerate(starts):
        end = starts[position + 1] if position + 1 < len(starts) else len(lines)
        block = lines[start:end]
        match = _ENTRY.match(block[0].rstrip("\n"))
        assert match is not None
        entries.append(Entry(match.group("version"), match.group("date"), "".join(block), _sections(block[1:])))
    return Changelog(preamble, tuple(entries))


def _sections(lines: list[str]) -> dict[str, str]:
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        match = _SECTION.match(line.rstrip("\n"))
        if match is not None:
            current = sections.setdefault(match.group("name"), [])
        elif current is not None:
            current.append(line)
    return {name: "".join(body) for name, body in sections.items()}


def mentions(text: str, phrase: str) -> bool:
    """``phrase`` appears in ``text``, ignoring case, runs of white space and backticks."""
    return _plain(phrase) in _plain(text)


def _plain(text: str) -> str:
    return " ".join(text.replace("`", "").lower().split())


__all__ = ["Changelog", "Entry", "mentions", "parse_changelog"]
