"""Ask the judge what the rules of the user checks could not decide (rarely: most conversations
are decided by the rules alone).

Each :class:`~agent_evals.user_checks.JudgeQuestion` becomes one question about the simulated
user, through the run mode (live, recorded with its key, replayed by it): ``pass: true`` means
the user behaved well; ``false`` is a finding *by the judge*, with its reason. A judge that is
not configured, a replay without the reply, a reply that is not a verdict (twice) or a judge
model that fails leave the check undecided, saying why: never a finding, never an error.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_evals.conversation.modes import RunMode
from agent_evals.judging.questions import SYSTEM, VERDICT_FORMAT, transcript
from agent_evals.judging.stage import ask_for_verdict
from agent_evals.llm.source import ModelSource
from agent_evals.llm.types import Message
from agent_evals.record import RunRecord, Undecided, UserFinding, question_key
from agent_evals.user_checks import JudgeQuestion, UserBrief

Answer = UserFinding | Undecided | None

_ASK = {
    "ended_early": (
        "At the end, {about}. Did the user end the conversation at a sensible point for its goal: the goal "
        "achieved, or clearly impossible, or the assistant only offering something the goal did not ask for? "
        "Answer true if the ending was fine; false if the user stopped too early (the assistant still needed an "
        "answer from the user, or was still working towards the goal)."
    ),
    "off_goal": (
        "In turn {turn}, {about}. Is that message part of pursuing the user's goal (answering the assistant, "
        "asking about the task, thanking, small talk around it)? Answer true if it is; false if it is off the "
        "user's goal."
    ),
}


def user_question_key(question: JudgeQuestion) -> str:
    """``user:ended_early:turn2#1@v1``: what a recorded reply answers."""
    return question_key(f"user:{question.check}:turn{question.turn}", 0)


def messages_for(question: JudgeQuestion, record: RunRecord, brief: UserBrief) -> list[Message]:
    facts = "\n".join(f"- {text}" for text in brief.texts() if text != brief.goal) or "(none)"
    body = (
        "The user in this conversation is simulated: a model plays a person with a goal and a brief.\n"
        f"The user's goal:\n{brief.goal or '(not stated)'}\n\nIts brief (persona, facts, instructions):\n{facts}\n\n"
        f"The conversation:\n{transcript(record)}\n\n"
        f"Question about the user (not the assistant): {_ASK[question.check].format(about=question.about, turn=question.turn)}"
    )
    return [{"role": "system", "content": SYSTEM.format(format=VERDICT_FORMAT)}, {"role": "user", "content": body}]


async def judge_user(
    questions: Sequence[JudgeQuestion], record: RunRecord, brief: UserBrief, *, mode: RunMode, models: ModelSource
) -> list[tuple[JudgeQuestion, Answer]]:
    """The judge's answer to each question (see the module docstring)."""
    answers: list[tuple[JudgeQuestion, Answer]] = []
    for question in questions:
        key = user_question_key(question)
        why = mode.judge_cannot_answer(key)
        if why is not None:
            answers.append((question, Undecided(question.check, f"not judged: {why}", question.turn)))
            continue
        subject = f"the user's {question.check.replace('_', ' ')} (turn {question.turn})"
        verdict, problem, model = await ask_for_verdict(
            mode, models, key, messages_for(question, record, brief), subject, what=f"user check {question.check}"
        )
        if verdict is None:
            answers.append((question, Undecided(question.check, f"not judged: {problem}", question.turn)))
        elif verdict.passed:
            answers.append((question, None))
        else:
            by = f" (judge: {model})" if model else ""
            answers.append((question, UserFinding(question.check, question.turn, f"{question.about}: {verdict.reason}{by}", "judge")))
    return answers
