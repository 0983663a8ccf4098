"""Where two JSON values first part: a JSON Pointer and both values (standard library only).

Used to name a replay's divergence (``turn 2, tool call 3 (create_item): argument /config/name:
recorded "a", now "b"``). Numbers compare by value (``1 == 1.0``), a boolean is never a number,
object keys are walked in the recorded value's order, then the live value's extra keys.
"""

from __future__ import annotations

import json
from typing import Any

ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "(absent)"})()


def first_difference(recorded: Any, live: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """``(pointer, recorded value, live value)`` of the first difference, or None when equal."""
    if isinstance(recorded, dict) and isinstance(live, dict):
        for key in [*recorded, *(k for k in live if k not in recorded)]:
            found = first_difference(recorded.get(key, ABSENT), live.get(key, ABSENT), f"{path}/{_escape(key)}")
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(live, list):
        for index in range(max(len(recorded), len(live))):
            found = first_difference(recorded[index] if index < len(recorded) else ABSENT,
                                     live[index] if index < len(live) else ABSENT, f"{path}/{index}")
            if found is not None:
                return found
        return None
    return None if _same(recorded, live) else (path or "/", recorded, live)


def shown(value: Any, limit: int = 80) -> str:
    """A value as compact JSON for a message (``(absent)`` for a missing one)."""
    if value is ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")
