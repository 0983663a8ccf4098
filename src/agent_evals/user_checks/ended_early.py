"""``ended_early``: the user said it was done, or gave up, too early (pure).

Too early is: the goal's observable outcome (the pack's, e.g. a pull-request link) is not in
the conversation yet, and the assistant's last reply was still working ("I'll create it now",
"let me check") or asking ("Shall I open the pull request?"). Not too early:

- the conversation ended any other way (a limit, an error) or has no reply to look at;
- the outcome is in one of the assistant's replies;
- the assistant refused ("I can't …", "there is no exception"): the refusal is the answer;
- its last question is only a courtesy ("Is there anything else?");
- the user gave up on an assistant that repeated itself (it was going nowhere).

An assistant still asking a real question cannot always be told by rules: when the goal does
not call for the pack's outcome (a question answered, with an offer of more), or when the user
gave up on a question (it may not have the answer: giving up can be right), the judge decides.
"""

from __future__ import annotations

import re

from agent_evals.record import UserCheck, UserFinding
from agent_evals.user_checks.base import Conversation, JudgeQuestion, Outcome
from agent_evals.user_checks.text import any_match, normalized, quoted, sentences, similarity

NAME: UserCheck = "ended_early"
REFUSAL = re.compile(
    r"\b(?:I can(?:not|'t|’t)|I am (?:not able|unable)|I'm (?:not able|unable)|I won(?:'t|’t)|"
    r"I (?:must|have to) decline|(?:is|are) not (?:allowed|permitted|possible)|not (?:allowed|permitted) to|"
    r"(?:there is|there's|there are) no exceptions?|no exceptions?\b|isn(?:'t|’t) (?:allowed|possible)|"
    r"(?:is|are) (?:blocked|forbidden|rejected)|I do(?:n't|n’t| not) have (?:access|permission))",
    re.IGNORECASE,
)
WORKING = (
    re.compile(r"\b(?:I(?:'ll|’ll| will)|I(?:'m|’m| am) going to|let me|allow me to|give me a (?:moment|minute|second)|"
               r"one (?:moment|second|minute)|(?:please )?(?:wait|hold on)\b|working on it)\b", re.IGNORECASE),
    re.compile(r"\bI(?:'m|’m| am) (?:now )?(?:creating|preparing|checking|opening|validating|looking|setting|"
               r"working|making|processing)\b", re.IGNORECASE),
)
_CONDITIONAL = re.compile(r"\b(?:if|when|whenever|once|as soon as|come back)\b", re.IGNORECASE)
ASKING = (
    re.compile(r"\?"),
    re.compile(r"\b(?:just say the word|let me know (?:if|whether|which|what|how)|please confirm|can you confirm|"
               r"could you (?:confirm|tell|give|provide|send)|please (?:tell|give|provide|send) me)\b", re.IGNORECASE),
)
COURTESY = re.compile(
    r"\b(?:anything else|something else|any(?: other| more| further)? questions?|further (?:help|questions?)|"
    r"else I can (?:help|do))\b",
    re.IGNORECASE,
)
REPEATED_REPLY = 0.8  # an assistant that says the same again is going nowhere


def check(conversation: Conversation) -> Outcome:
    record = conversation.record
    end = record.end.reason if record.end is not None else None
    if end not in ("done", "gave_up") or not conversation.turns:
        return Outcome()
    replies = [t.assistant or "" for t in conversation.turns]
    last, turn = replies[-1], len(replies)
    framing = conversation.framing
    if framing.outcome_pattern and any(re.search(framing.outcome_pattern, r) for r in replies):
        return Outcome()
    tail = " ".join(sentences(last)[-2:])
    if REFUSAL.search(last) or (end == "gave_up" and _repeats(last, replies[:-1])):
        return Outcome()
    said = "said it was done" if end == "done" else "gave up"
    missing = f"; {framing.outcome} was not given" if framing.outcome else ""
    working = any_match(WORKING, tail)
    if working is not None and not _CONDITIONAL.search(_sentence_of(tail, working.start())):
        evidence = f"the user {said} while the assistant was still working ({quoted(_sentence_of(tail, working.start()))}){missing}"
        return Outcome(findings=[UserFinding(NAME, turn, evidence)])
    question = _question(tail)
    if question is None:
        return Outcome()
    if end == "done" and _wanted(conversation):  # said done, yet the goal's outcome is missing
        evidence = f"the user {said} while the assistant was still asking ({quoted(question)}){missing}"
        return Outcome(findings=[UserFinding(NAME, turn, evidence)])
    about = f"the user {said} after the assistant asked {quoted(question, 160)}"
    return Outcome(questions=[JudgeQuestion(NAME, turn, about)])


def _wanted(conversation: Conversation) -> bool:
    framing = conversation.framing
    if not framing.outcome_pattern:
        return False
    return not framing.outcome_wanted or bool(re.search(framing.outcome_wanted, conversation.brief.goal, re.IGNORECASE))


def _question(tail: str) -> str | None:
    """The assistant's question in its last sentences, unless it is only a courtesy."""
    for sentence in reversed(sentences(tail)):
        if any_match(ASKING, sentence) and not COURTESY.search(sentence):
            return sentence
    return None


def _sentence_of(text: str, position: int) -> str:
    start = 0
    for sentence in sentences(text):
        found = text.find(sentence, start)
        if found <= position < found + len(sentence):
            return sentence
        start = max(found, start)
    return text


def _repeats(last: str, earlier: list[str]) -> bool:
    return any(normalized(last) == normalized(e) or similarity(last, e) >= REPEATED_REPLY for e in earlier)
