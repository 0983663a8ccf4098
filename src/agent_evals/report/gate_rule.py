"""One line of the gate's verdict: :class:`Rule`, and how its status reads (pure).

A rule **holds** or is **broken**; it is **not checked** when its subject is absent (no case of
that priority, no baseline); it is **undecided** when the results cannot show what it asks (a
replay, deciding checks not graded, a baseline too thin to show a regression): the gate then
cannot decide. A **warning** names what the reader must know (a regression no rule covers, a
stale baseline) without deciding anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Status = Literal["holds", "broken", "not_checked", "undecided", "warning"]
MARKS: dict[Status, str] = {"holds": "ok    ", "broken": "BROKEN", "not_checked": "--    ", "undecided": "CANNOT",
                            "warning": "WARN  "}
MAX_LISTED = 6


@dataclass(frozen=True)
class Rule:
    name: str
    status: Status
    line: str

    def text(self) -> str:
        return f"{MARKS[self.status]} {self.name}: {self.line}"


def listed(items: Sequence[str], most: int = MAX_LISTED) -> str:
    """``a, b, c, and 4 more``."""
    more = f", and {len(items) - most} more" if len(items) > most else ""
    return ", ".join(items[:most]) + more
