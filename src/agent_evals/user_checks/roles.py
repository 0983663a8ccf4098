"""``role_confusion`` and ``leaked_instructions``: the user talked as someone else (pure).

- **role confusion**: a message that talks as the assistant ("How can I help you today?",
  "I've opened the pull request for you", "As an AI …"), writes the assistant's part
  (a line starting ``Assistant:``), echoes the assistant's last reply as its own, or asks a
  question and answers it itself ("Shall I create it? Yes, …");
- **leaked instructions**: a message that mentions the user's brief or its being simulated
  ("my instructions say", "as a simulated user", "my facts"), copies a line of its
  instructions, or carries a stop token (``[DONE]``, ``[GIVE UP]``, ``###STOP###``).
"""

from __future__ import annotations

import re

from agent_evals.record import UserCheck, UserFinding
from agent_evals.user_checks.base import Conversation, Outcome
from agent_evals.user_checks.text import any_match, normalized, plain, quoted, sentences, similarity, words

ROLE: UserCheck = "role_confusion"
LEAKED: UserCheck = "leaked_instructions"

ASSISTANT_VOICE = (
    re.compile(r"\bhow (?:can|may|could) I (?:help|assist)\b", re.IGNORECASE),
    re.compile(r"\bwhat can I (?:do|help you with) for you\b", re.IGNORECASE),
    re.compile(r"\bis there anything (?:else )?I can (?:help|do|assist)\b", re.IGNORECASE),
    re.compile(r"\bI(?:'d| would| am|'m) (?:be )?(?:happy|glad) to (?:help|assist)\b", re.IGNORECASE),
    re.compile(r"\bI(?:'m| am) (?:here|available) to (?:help|assist)\b", re.IGNORECASE),
    re.compile(r"\bdon(?:'t|’t| not) hesitate to (?:ask|reach out|contact)\b", re.IGNORECASE),
    re.compile(r"\bif (?:you have|there are) any (?:other |further |more )?(?:questions|requests)\b", re.IGNORECASE),
    re.compile(r"\bI can (?:also )?(?:help|assist) (?:you )?with (?:your|any)\b", re.IGNORECASE),
    re.compile(r"\bas an (?:AI|assistant|language model)\b", re.IGNORECASE),
    re.compile(r"\bI(?:'m| am) (?:an|your|the) (?:AI|assistant|virtual assistant|bot)\b", re.IGNORECASE),
    re.compile(r"\bI(?:'ve| have) (?:now )?(?:created|opened|submitted|prepared|validated|completed|raised) "
               r"(?:the|your|a|this)\b.{0,40}\bfor you\b", re.IGNORECASE),
    re.compile(r"\bhere (?:is|are) (?:the|your) (?:configuration|summary|result|details|pull request|link)\b.{0,20}:",
               re.IGNORECASE),
)
ROLE_LABEL = re.compile(r"(?:^|\n)\s*\**(?:assistant|ai|agent|bot|system)\**\s*:", re.IGNORECASE)
SELF_ANSWER = re.compile(r"^(?:yes|no|sure|certainly|of course|absolutely)\b", re.IGNORECASE)
ECHO = 0.7  # share of the message's word pairs found in the assistant's last reply
ECHO_MIN_WORDS = 12

STOP_TOKENS = re.compile(r"\[\s*(?:DONE|GIVE ?UP|GAVE ?UP|STOP)\s*\]|###\s*STOP\s*###|<\|?(?:end|stop|im_end)\|?>",
                         re.IGNORECASE)
BRIEF_WORDS = (
    re.compile(r"\bmy (?:brief|instructions|persona|system prompt|prompt|facts|role[- ]?play)\b", re.IGNORECASE),
    re.compile(r"\b(?:simulated|simulating|simulate|role[- ]?play(?:ing)?|pretend(?:ing)? to be)\b"
               r"(?: (?:a|the|as))? (?:user|developer|person|customer|human)\b", re.IGNORECASE),
    re.compile(r"\bas (?:a|the) simulated\b|\bI(?:'m| am) (?:just )?(?:a|an) (?:simulated|language model|LLM|AI)\b",
               re.IGNORECASE),
    re.compile(r"\b(?:according to|in|from) (?:my|the) (?:facts|brief|instructions)\b", re.IGNORECASE),
    re.compile(r"\b(?:your goal|what you know|how to behave|how you talk)\s*:", re.IGNORECASE),
)


def check_roles(conversation: Conversation) -> Outcome:
    findings = []
    previous = ""
    for number, turn in enumerate(conversation.turns, start=1):
        why = _talks_as_assistant(plain(turn.user), previous)
        if why is not None:
            findings.append(UserFinding(ROLE, number, why))
        previous = turn.assistant or ""
    return Outcome(findings=findings)


def _talks_as_assistant(message: str, previous: str) -> str | None:
    if (found := ROLE_LABEL.search(message)) is not None:
        return f"the user wrote the assistant's part ({quoted(message[found.start():].strip())})"
    if (found := any_match(ASSISTANT_VOICE, message)) is not None:
        return f"the user talked as the assistant ({quoted(_around(message, found))})"
    if previous and len(words(message)) >= ECHO_MIN_WORDS and similarity(message, previous) >= ECHO:
        return f"the user repeated the assistant's reply as its own ({quoted(message)})"
    parts = sentences(message)
    for asked, answer in zip(parts, parts[1:], strict=False):
        if asked.endswith("?") and SELF_ANSWER.search(answer):
            return f"the user answered its own question ({quoted(asked + ' ' + answer)})"
    return None


def check_leaks(conversation: Conversation, instructions: list[str] | None = None) -> Outcome:
    findings = []
    lines = [(line, normalized(line)) for line in (instructions or []) if len(words(line)) >= 6]
    for number, turn in enumerate(conversation.turns, start=1):
        message = plain(turn.user)
        found = STOP_TOKENS.search(message) or any_match(BRIEF_WORDS, message)
        if found is not None:
            findings.append(UserFinding(LEAKED, number, f"the user mentioned its instructions ({quoted(_around(message, found))})"))
            continue
        said = normalized(message)
        copied = next((line for line, key in lines if key in said), None)
        if copied is not None:
            findings.append(UserFinding(LEAKED, number, f"the user copied a line of its instructions ({quoted(copied)})"))
    return Outcome(findings=findings)


def _around(text: str, found: re.Match[str], width: int = 30) -> str:
    start, end = max(found.start() - width, 0), min(found.end() + width, len(text))
    return ("…" if start else "") + text[start:end].strip() + ("…" if end < len(text) else "")
