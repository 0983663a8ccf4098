"""The simulated user's side of one result row, as the report needs it (pure).

From the row's run record: who played the user (``user.kind``, ``user.model``) and what the
user checks found (``user_review``: the checks that found something, the first finding's
line, how many checks could not decide, whether they were skipped). An invalid row (the
user spoiled the conversation) is a Promptfoo error row whose record says ``invalid``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

FIXED_KINDS = ("user_messages", "single_turn")


class UserSide(NamedTuple):
    kind: str | None  # simulated_user, class, user_messages, single_turn (None: no run record)
    model: str | None  # the simulated user's model
    checked: bool  # the user checks ran (not fixed messages, not an error, not switched off)
    invalid: bool
    findings: tuple[str, ...] = ()  # the checks that found something, in order (a check once)
    first: str | None = None  # "turn 2, the user invented region 'westus9' (…)"
    undecided: int = 0

    @property
    def fixed(self) -> bool:
        return self.kind in FIXED_KINDS


NO_USER = UserSide(None, None, False, False)


def user_side(record: Mapping[str, Any]) -> UserSide:
    """The user side of a row's run record (``response.metadata``)."""
    user = record.get("user")
    user = user if isinstance(user, dict) else {}
    kind, model = _text(user.get("kind")), _text(user.get("model"))
    review = record.get("user_review")
    if not isinstance(review, dict):
        return UserSide(kind, model, False, False) if kind or model else NO_USER
    findings = [f for f in review.get("findings") or () if isinstance(f, dict)]
    undecided = review.get("undecided") or ()
    first = findings[0] if findings else None
    return UserSide(
        kind=kind,
        model=model,
        checked=review.get("skipped") is None,
        invalid=bool(review.get("invalid")) and bool(findings),
        findings=tuple(dict.fromkeys(str(f.get("check")) for f in findings)),
        first=f"turn {first.get('turn')}, {first.get('evidence')}" if first else None,
        undecided=len(undecided) if isinstance(undecided, list) else 0,
    )


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
