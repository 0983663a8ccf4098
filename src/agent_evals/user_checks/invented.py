"""``invented_fact``: the user stated a value that is neither in its brief nor said earlier by the
assistant (pure).

Each user message's values (:mod:`.values`: names, regions, address ranges, IP and e-mail
addresses, links, IDs, numbers, the pack's kinds) are looked up in the brief (goal, persona,
facts, instructions; a custom simulator's params) and in the assistant's replies *before* that
message. A value is reported once, at the turn it first appears. A brief without facts cannot
tell a fact from an invention: the check says it cannot decide (never a finding).
"""

from __future__ import annotations

from agent_evals.record import Undecided, UserCheck, UserFinding
from agent_evals.user_checks.base import Conversation, Outcome
from agent_evals.user_checks.values import Grounds

NAME: UserCheck = "invented_fact"
NO_FACTS = "the user's brief has no facts: its values cannot be told from inventions (give the case facts)"


def check(conversation: Conversation) -> Outcome:
    if not conversation.brief.has_facts:
        return Outcome(undecided=[Undecided(NAME, NO_FACTS)])
    grounds = Grounds()
    grounds.add("\n".join(conversation.brief.texts()))  # one pass over the whole brief
    seen: set[tuple[str, str]] = set()
    findings: list[UserFinding] = []
    for number, turn in enumerate(conversation.turns, start=1):
        for value in conversation.vocabulary.values(turn.user):
            key = (value.kind, value.text.lower())
            if key in seen or grounds.has(value):
                continue
            seen.add(key)
            findings.append(UserFinding(
                NAME, number, f"the user invented {value.describe()} (not in its facts, not said by the assistant)"
            ))
        grounds.add(turn.assistant or "")
    return Outcome(findings=findings)
