"""All the user checks of one conversation: :func:`review` (pure, well under a millisecond per turn).

Every check reads the run record and the user's brief; the rules decide first. What they
cannot decide becomes a :class:`~.base.JudgeQuestion` (the provider asks the judge, through
the run mode: :mod:`agent_evals.judging.user_questions`) or, when nobody can decide (a brief
without facts), an ``undecided`` entry. Fixed user messages are not checked: they are the
case's own words.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from agent_evals.conversation.framing import UserFraming
from agent_evals.record import USER_CHECKS, RunRecord, UserCheck, UserReview
from agent_evals.user_checks import ended_early, invented, messages, roles
from agent_evals.user_checks.base import Conversation, JudgeQuestion, Outcome
from agent_evals.user_checks.brief import UserBrief
from agent_evals.user_checks.text import normalized, sentences
from agent_evals.record import Undecided, UserFinding

FIXED = "fixed user messages: no user checks apply (they are the case's own words)"
CHECKS: dict[UserCheck, Callable[[Conversation], Outcome]] = {
    "ended_early": ended_early.check,
    "invented_fact": invented.check,
    "role_confusion": roles.check_roles,
    "empty_message": messages.check_empty,
    "repeated_message": messages.check_repeated,
    "off_goal": messages.check_off_goal,
}
assert set(CHECKS) | {"leaked_instructions"} == set(USER_CHECKS)


@dataclass(frozen=True)
class Review:
    """The rules' verdict (``review``) and what is left for the judge (``questions``)."""

    review: UserReview
    questions: tuple[JudgeQuestion, ...] = ()


def review(
    record: RunRecord,
    brief: UserBrief,
    framing: UserFraming = UserFraming(),
    *,
    prompt: str = "",
    skip: Collection[UserCheck] = (),
) -> Review:
    """Check the user's side of ``record``. ``prompt`` is the simulated user's system prompt (a line of
    it copied into a message is a leak); ``skip`` names checks switched off for the suite."""
    if record.user.kind in ("user_messages", "single_turn"):
        return Review(UserReview(skipped=FIXED))
    if record.end is None or record.end.reason == "error":
        return Review(UserReview(skipped="the conversation ended in an error: the row is not graded, nor its user"))
    conversation = Conversation(record, brief, framing)
    outcome = Outcome()
    for name, check in CHECKS.items():
        if name not in skip:
            outcome.add(check(conversation))
    if "leaked_instructions" not in skip:
        outcome.add(roles.check_leaks(conversation, instruction_lines(prompt, brief)))
    findings = sorted(outcome.findings, key=lambda f: (f.turn, USER_CHECKS.index(f.check)))
    return Review(UserReview(tuple(findings), tuple(outcome.undecided)), tuple(outcome.questions))


def instruction_lines(prompt: str, brief: UserBrief) -> list[str]:
    """The sentences of the user's instructions that are not its own brief (its goal, facts and
    persona it may restate)."""
    if not prompt:
        return []
    own = "\n".join(normalized(text) for text in brief.texts())
    lines = [line.lstrip("-*• ").strip() for line in sentences(prompt)]
    return [line for line in lines if line and normalized(line) not in own]


def with_judged(rules: Review, judged: Sequence[tuple[JudgeQuestion, object]]) -> UserReview:
    """Fold the judge's answers into the review: ``(question, UserFinding | Undecided | None)`` each
    (None: the judge found nothing wrong)."""
    findings = list(rules.review.findings)
    undecided = list(rules.review.undecided)
    for _, answer in judged:
        if isinstance(answer, UserFinding):
            findings.append(answer)
        elif isinstance(answer, Undecided):
            undecided.append(answer)
    findings.sort(key=lambda f: (f.turn, USER_CHECKS.index(f.check)))
    return UserReview(tuple(findings), tuple(undecided), rules.review.skipped, judged=len(judged))
