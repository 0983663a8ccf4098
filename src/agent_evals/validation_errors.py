"""One readable line from a pydantic ``ValidationError``: ``where: what (got value); ...``."""

from __future__ import annotations

from pydantic import ValidationError


def describe(exc: ValidationError, *, top: str = "(top level)", limit: int | None = None) -> str:
    """Each error as ``dotted.path: message``, with short scalar inputs shown (never objects)."""
    parts = []
    for err in exc.errors()[:limit]:
        where = ".".join(str(p) for p in err["loc"]) or top
        value = err.get("input")
        shown = f" (got {value!r})" if isinstance(value, (str, int, float)) and len(repr(value)) < 80 else ""
        parts.append(f"{where}: {err['msg']}{shown}")
    return "; ".join(parts)
