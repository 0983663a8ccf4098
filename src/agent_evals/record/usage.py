"""Token usage and cost, per role (agent, simulated user, judge)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

Role = Literal["agent", "user", "judge"]
ROLES: tuple[Role, ...] = get_args(Role)


@dataclass(frozen=True)
class Usage:
    """Tokens, calls and cost of one or more model calls."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    calls: int = 0
    cost: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            calls=self.calls + other.calls,
            cost=round(self.cost + other.cost, 8),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "calls": self.calls,
            "cost": self.cost,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | None) -> Usage:
        raw = raw or {}
        return cls(
            prompt_tokens=_int(raw.get("prompt_tokens")),
            completion_tokens=_int(raw.get("completion_tokens")),
            total_tokens=_int(raw.get("total_tokens")),
            calls=_int(raw.get("calls")),
            cost=float(raw.get("cost") or 0.0),
        )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else int(value or 0)


def usage_by_role(raw: Mapping[str, Any] | None) -> dict[Role, Usage]:
    """``{"agent": Usage, "user": Usage, "judge": Usage}`` from the record's ``usage`` object."""
    raw = raw or {}
    return {role: Usage.from_dict(raw.get(role)) for role in ROLES}
