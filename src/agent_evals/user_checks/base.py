"""What every user check gets (:class:`Conversation`) and gives back (:class:`Outcome`) (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from agent_evals.conversation.framing import UserFraming
from agent_evals.record import RunRecord, Turn, Undecided, UserCheck, UserFinding
from agent_evals.user_checks.brief import UserBrief
from agent_evals.user_checks.values import Vocabulary


@dataclass(frozen=True)
class Conversation:
    """One conversation as the user checks read it: the record, the user's brief, the pack's framing."""

    record: RunRecord
    brief: UserBrief
    framing: UserFraming = UserFraming()

    @property
    def turns(self) -> list[Turn]:
        return self.record.turns

    @cached_property
    def vocabulary(self) -> Vocabulary:
        return vocabulary(self.framing)


_VOCABULARIES: dict[tuple[tuple[str, str], ...], Vocabulary] = {}


def vocabulary(framing: UserFraming) -> Vocabulary:
    """The pack's vocabulary, compiled once per worker."""
    found = _VOCABULARIES.get(framing.values)
    if found is None:
        found = _VOCABULARIES[framing.values] = Vocabulary(framing.values)
    return found


@dataclass(frozen=True)
class JudgeQuestion:
    """What the rules could not decide and the judge is asked: the check, the turn, what to look at."""

    check: UserCheck
    turn: int
    about: str  # one line for the question: "the user ended the conversation (done) after: '...'"


@dataclass
class Outcome:
    """A check's answer: findings (it spoiled the conversation), undecided (it cannot tell), questions
    (the judge decides)."""

    findings: list[UserFinding] = field(default_factory=list)
    undecided: list[Undecided] = field(default_factory=list)
    questions: list[JudgeQuestion] = field(default_factory=list)

    def add(self, other: Outcome) -> None:
        self.findings += other.findings
        self.undecided += other.undecided
        self.questions += other.questions
