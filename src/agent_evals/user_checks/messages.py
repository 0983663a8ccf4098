"""``empty_message``, ``repeated_message`` and ``off_goal``: messages that do not move the task (pure).

- **empty**: nothing but spaces and punctuation, or a placeholder (``(no message)``, ``N/A``);
- **repeated**: the same message of five words or more as an earlier one of the user (or a long
  one that mostly says it again), while the assistant's reply before it was a different one
  (answering the same question twice the same way is fine; looping is not);
- **off goal**: a message of many content words that shares none with the user's brief, the
  assistant's replies or its own earlier messages. A message that shares almost none cannot be
  told by rules: the judge decides.
"""

from __future__ import annotations

import re

from agent_evals.record import UserCheck, UserFinding
from agent_evals.user_checks.base import Conversation, JudgeQuestion, Outcome
from agent_evals.user_checks.text import content_words, normalized, plain, quoted, similarity, words

EMPTY: UserCheck = "empty_message"
REPEATED: UserCheck = "repeated_message"
OFF_GOAL: UserCheck = "off_goal"
PLACEHOLDER = re.compile(r"^\W*(?:no message|empty|n/?a|none|nothing|silence|no reply|no response|blank|\.\.\.)\W*$",
                         re.IGNORECASE)
REPEAT_MIN_WORDS = 5
NEAR_MIN_WORDS = 15  # a long message that mostly repeats an earlier one is a repeat too
NEAR_REPEAT = 0.6  # share of its word pairs (bigrams) found in the earlier message
OFF_GOAL_MIN_WORDS = 8  # content words a message needs before it can be off its goal
OFF_GOAL_SHARED = 0.15  # below this share of content words in common, the judge decides


def check_empty(conversation: Conversation) -> Outcome:
    findings = []
    for number, turn in enumerate(conversation.turns, start=1):
        text = plain(turn.user)
        if not re.search(r"\w", text) or PLACEHOLDER.match(text.strip()):
            findings.append(UserFinding(EMPTY, number, f"the user sent an empty message ({quoted(text)})"))
    return Outcome(findings=findings)


def check_repeated(conversation: Conversation) -> Outcome:
    findings = []
    turns = conversation.turns
    for number, turn in enumerate(turns, start=1):
        if len(words(turn.user)) < REPEAT_MIN_WORDS:
            continue
        for earlier in range(number - 1):
            if not _same_message(plain(turns[earlier].user), plain(turn.user)):
                continue
            before_then = turns[earlier - 1].assistant or "" if earlier else ""
            before_now = turns[number - 2].assistant or ""
            if earlier and similarity(before_then, before_now) >= 0.8:
                continue  # the assistant asked the same again: the same answer is fine
            findings.append(UserFinding(
                REPEATED, number, f"the user repeated its message of turn {earlier + 1} ({quoted(turn.user)})"
            ))
            break
    return Outcome(findings=findings)


def _same_message(earlier: str, now: str) -> bool:
    """The same message, or a long one that mostly says it again (a simulator looping)."""
    if normalized(earlier) == normalized(now):
        return True
    return min(len(words(earlier)), len(words(now))) >= NEAR_MIN_WORDS and similarity(earlier, now) >= NEAR_REPEAT


def check_off_goal(conversation: Conversation) -> Outcome:
    outcome = Outcome()
    seen = conversation.brief.texts()  # read only for a long message (the framing's generic words are no topic)
    context: set[str] = set()
    for number, turn in enumerate(conversation.turns, start=1):
        mine = content_words(plain(turn.user))
        if len(mine) >= OFF_GOAL_MIN_WORDS:
            if seen:
                context |= content_words("\n".join(seen))
                seen = []
            shared = len(mine & context) / len(mine)
            if shared == 0:
                outcome.findings.append(UserFinding(
                    OFF_GOAL, number, f"the user's message shares nothing with its goal or the conversation ({quoted(turn.user)})"
                ))
            elif shared < OFF_GOAL_SHARED:
                outcome.questions.append(JudgeQuestion(OFF_GOAL, number, f"the user wrote {quoted(turn.user, 240)}"))
        seen += [turn.user, turn.assistant or ""]
    return outcome
