"""The questions the judge is asked about a conversation: one per verdict, each on its own.

Pure: from the run record (rendered as people read it, tool lines included) and the check's
parsed config to chat messages. Every question asks for one JSON object,
``{"pass": true|false, "reason": "<one sentence>"}`` (``trajectory_quality`` adds a
``"score"`` from 0 to 1), so a reply either is a verdict or is asked for again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import hashlib
import json

from agent_evals.conversation.transcript import render_output, tool_line
from agent_evals.llm.types import Message
from agent_evals.record import RunRecord

SYSTEM_OPENING = "You are a careful, impartial judge of a conversation"
SYSTEM = SYSTEM_OPENING + """ \
between a user and an AI assistant that works with tools. You answer exactly one question about it. Base your answer only on what is \
shown: the user's and the assistant's messages, and the assistant's tool calls (lines starting \
with [tool]) with what each returned. Do not assume anything that is not shown, and do not \
reward an answer for sounding confident.

Reply with one JSON object and nothing else: {format}"""

VERDICT_FORMAT = '{"pass": true or false, "reason": "one sentence saying why"}'
SCORED_FORMAT = (
    '{"pass": true or false, "score": a number from 0 to 1, "reason": "one or two sentences saying why, '
    'naming where the routes differ"}'
)


@dataclass(frozen=True)
class Question:
    """One question to the judge: what it is about (shown in reasons) and the messages."""

    subject: str
    messages: list[Message]
    scored: bool = False


def _ask(subject: str, body: str, *, scored: bool = False) -> Question:
    system = SYSTEM.format(format=SCORED_FORMAT if scored else VERDICT_FORMAT)
    return Question(subject, [{"role": "system", "content": system}, {"role": "user", "content": body}], scored)


def transcript(record: RunRecord) -> str:
    """The conversation as the row's output shows it: turns, tool lines, how it ended."""
    return render_output(record)


def goal_question(record: RunRecord, goal: str) -> Question:
    body = (
        f"The user's goal:\n{goal.strip()}\n\nThe conversation:\n{transcript(record)}\n\n"
        "Question: did the conversation achieve the user's goal? Answer true only if everything the goal "
        "asks for was done or given to the user by the end of the conversation; a refusal, an unfinished "
        "task, or a promise to do it later is false, however good the reasons."
    )
    return _ask("the user's goal", body)


def inferred_goal_question(record: RunRecord) -> Question:
    """A real user states no goal: the judge infers it from the user's own messages, then judges it."""
    said = "\n".join(f"- {turn.user}" for turn in [*record.turns, *([record.pending] if record.pending else [])])
    body = (
        f"What the user wrote, in order:\n{said or '(nothing)'}\n\nThe conversation:\n{transcript(record)}\n\n"
        "Question: from the user's own messages only, infer what the user wanted from this conversation. "
        "Did the conversation achieve it? Answer true only if what the user wanted was done or given to the "
        "user by the end; a refusal of something the user was entitled to, an unfinished task, or a promise "
        "to do it later is false. A correct refusal of something the user may not have is true. Start the "
        "reason with the goal you inferred: 'The user wanted …'."
    )
    return _ask("the goal inferred from the user's messages", body)


def statement_questions(record: RunRecord, statements: Sequence[str], about: str) -> list[Question]:
    """One question per statement, each judged alone."""
    if about == "final_reply":
        asked = "\n".join(f"- {turn.user}" for turn in record.turns) or "(nothing)"
        context = f"What the user asked:\n{asked}\n\nThe assistant's final answer:\n{record.final_reply or '(no answer)'}"
        what = "the assistant's final answer"
    else:
        context = f"The conversation:\n{transcript(record)}"
        what = "the conversation"
    return [
        _ask(
            statement,
            f"{context}\n\nStatement: {statement.strip()}\n\nQuestion: is this statement true of {what}? "
            "Answer true only if it clearly holds; if it holds only in part, or cannot be told from what is "
            "shown, answer false.",
        )
        for statement in statements
    ]


def trajectory_question(record: RunRecord, expected: Sequence[str], notes: str | None) -> Question:
    actual = "\n".join(f"{c.index}. {tool_line(c).strip().removeprefix('[tool] ')}" for c in record.tool_calls)
    extra = f"\nWhat matters for this route: {notes.strip()}" if notes and notes.strip() else ""
    if not expected:  # reference-free: the route on its own merits
        body = (
            f"The assistant's tool calls, in order:\n{actual or '(no tool calls)'}{extra}\n\n"
            f"The conversation:\n{transcript(record)}\n\n"
            "Question: was the assistant's route through the tools good for what the user asked: the calls "
            "the requests needed, in a sensible order, with the right arguments, without needless, repeated "
            "or harmful calls, and without missing a step? Score 1 for a route an expert would take, 0 for "
            "one that fails the user; pass when the route is acceptable."
        )
        return _ask("the tool route", body, scored=True)
    route = "\n".join(f"{n}. {step}" for n, step in enumerate(expected, start=1))
    body = (
        f"The expected route through the tools:\n{route}{extra}\n\n"
        f"The assistant's actual tool calls, in order:\n{actual or '(no tool calls)'}\n\n"
        f"The conversation:\n{transcript(record)}\n\n"
        "Question: compare the actual route with the expected one. Was it as good: the calls the task "
        "needed, in a sensible order, with the right arguments, and without needless, repeated or harmful "
        "calls? Other calls that serve the task are fine. Score 1 for a route as good as the expected "
        "one, 0 for one that fails the task; pass when the route is acceptable."
    )
    return _ask("the tool route", body, scored=True)


def rubric_sha256(check: str) -> str:
    """A hash of what the judge is asked for ``check`` (the system prompt and the question's
    wording, with placeholders for the conversation, goal, statements and route): recorded with
    each judgement, so a verdict given to other wording is known as such (12 hex digits)."""
    empty = RunRecord(case_id="(case)")
    if check == "goal_reached":
        asked = [goal_question(empty, "(goal)")]
    elif check == "expected_statements":
        asked = [*statement_questions(empty, ["(statement)"], "final_reply"),
                 *statement_questions(empty, ["(statement)"], "conversation")]
    elif check == "trajectory_quality":
        asked = [trajectory_question(empty, ["(step)"], "(notes)")]
    else:
        return ""
    text = json.dumps([q.messages for q in asked], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:12]
