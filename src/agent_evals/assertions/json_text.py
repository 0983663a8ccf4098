"""How a JSON value reads in a check's reason: compact, shortened, an absent value named."""

from __future__ import annotations

import json
from typing import Any


class _Missing:
    """The absence of a value (a key not present, an array index past the end)."""

    def __repr__(self) -> str:
        return "(absent)"


MISSING: Any = _Missing()


def render(value: Any, limit: int = 120) -> str:
    """Compact JSON of a value for reasons, shortened to ``limit`` characters."""
    if value is MISSING:
        return "(absent)"
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
