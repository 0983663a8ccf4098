"""What the checks of the simulated user found in one conversation (standard library only).

The user's side of a conversation is checked too (:mod:`agent_evals.user_checks`): a
simulated user that stopped too early, invented a fact, talked as the assistant, leaked its
instructions, or sent an empty, repeated or off-goal message spoiled the conversation, and
the row is **invalid** (neither a pass nor a fail). :class:`UserReview` is the run record's
``user_review``:

- ``findings``: what spoiled it, each naming the turn and the evidence (``by`` the rules, or
  by the judge where the rules could not decide);
- ``undecided``: a check that could not decide (a brief without facts, a judge that gave no
  verdict), never a finding;
- ``skipped``: why no check applied (fixed user messages, the checks switched off, a
  conversation that ended in an error), else None.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

UserCheck = Literal[
    "ended_early", "invented_fact", "role_confusion", "leaked_instructions", "empty_message", "repeated_message",
    "off_goal",
]
USER_CHECKS: tuple[UserCheck, ...] = get_args(UserCheck)
FoundBy = Literal["rule", "judge"]


@dataclass(frozen=True)
class UserFinding:
    """One way the simulated user spoiled the conversation: the check, the turn, the evidence."""

    check: UserCheck
    turn: int
    evidence: str  # "the user invented region 'westus9' (not in its facts, not said by the assistant)"
    by: FoundBy = "rule"

    def line(self, case_id: str = "") -> str:
        """``C07 turn 2, the user invented region 'westus9'``."""
        return f"{case_id + ' ' if case_id else ''}turn {self.turn}, {self.evidence}"

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "turn": self.turn, "evidence": self.evidence, "by": self.by}

    @classmethod
    def from_dict(cls, raw: Any) -> UserFinding:
        if not isinstance(raw, Mapping) or raw.get("check") not in USER_CHECKS:
            raise ValueError(f"metadata 'user_review' findings must be {{check, turn, evidence}}, got {raw!r:.80}")
        turn = raw.get("turn")
        return cls(
            check=raw["check"],
            turn=turn if isinstance(turn, int) and not isinstance(turn, bool) else 0,
            evidence=str(raw.get("evidence") or ""),
            by="judge" if raw.get("by") == "judge" else "rule",
        )


@dataclass(frozen=True)
class Undecided:
    """A check that could not decide (not a finding): which, where, and why."""

    check: UserCheck
    why: str
    turn: int = 0  # 0: the whole conversation

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "turn": self.turn, "why": self.why}

    @classmethod
    def from_dict(cls, raw: Any) -> Undecided:
        if not isinstance(raw, Mapping) or raw.get("check") not in USER_CHECKS:
            raise ValueError(f"metadata 'user_review' undecided entries must be {{check, why}}, got {raw!r:.80}")
        turn = raw.get("turn")
        return cls(raw["check"], str(raw.get("why") or ""), turn if isinstance(turn, int) else 0)


@dataclass(frozen=True)
class UserReview:
    """The user's side of one conversation, checked (see the module docstring)."""

    findings: tuple[UserFinding, ...] = ()
    undecided: tuple[Undecided, ...] = ()
    skipped: str | None = None
    judged: int = 0  # questions the judge was asked about the user

    @property
    def invalid(self) -> bool:
        """The user spoiled the conversation: the row is neither a pass nor a fail."""
        return bool(self.findings)

    def summary(self, case_id: str = "") -> str:
        """``invalid: C07 turn 2, the user invented region 'westus9'`` (and how many more)."""
        if not self.findings:
            return "valid"
        more = len(self.findings) - 1
        return "invalid: " + self.findings[0].line(case_id) + (f" (and {more} more finding(s))" if more else "")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "invalid": self.invalid,
            "findings": [f.to_dict() for f in self.findings],
            "undecided": [u.to_dict() for u in self.undecided],
        }
        if self.skipped is not None:
            out["skipped"] = self.skipped
        if self.judged:
            out["judged"] = self.judged
        return out

    @classmethod
    def from_dict(cls, raw: Any) -> UserReview:
        if not isinstance(raw, Mapping):
            raise ValueError(f"metadata 'user_review' must be an object, got {type(raw).__name__}")
        findings, undecided = raw.get("findings") or [], raw.get("undecided") or []
        if not isinstance(findings, list) or not isinstance(undecided, list):
            raise ValueError("metadata 'user_review' findings and undecided must be lists")
        skipped = raw.get("skipped")
        judged = raw.get("judged")
        return cls(
            findings=tuple(UserFinding.from_dict(f) for f in findings),
            undecided=tuple(Undecided.from_dict(u) for u in undecided),
            skipped=str(skipped) if skipped is not None else None,
            judged=judged if isinstance(judged, int) and not isinstance(judged, bool) else 0,
        )
