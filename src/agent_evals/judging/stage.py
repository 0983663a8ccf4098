"""Ask the judge about a finished conversation: one question per verdict, each retried once.

:func:`judge_conversation` runs in the provider's worker after the conversation (and its
end-state snapshot), through the run mode (:meth:`RunMode.ask_judge`): live on the judge's
model, recorded into the cassette with the question each reply answers, or replayed from
it. Its :class:`~agent_evals.record.Judgement` list goes into the run record's ``judged``,
where the judged checks' ``grade`` functions read it. Usage is the judge's
(:class:`~agent_evals.conversation.metering.MeteredModels`, role ``judge``).

* Judge unavailable (no judge model, ``JUDGE_MODEL=none``, a cassette recorded without
  one): each check's judgement is ``not_graded`` with the reason; nothing is asked.
* A reply that is not a verdict is asked for once more; a second one ends the row as an
  error of kind ``model`` (:class:`JudgeReplyError`), never as a failed check.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_evals.assertions.registry import CheckRef, JUDGED_CHECKS, parse_check_config
from agent_evals.conversation.modes import RunMode
from agent_evals.judge import JUDGE_ATTEMPTS
from agent_evals.judging.questions import (
    Question,
    goal_question,
    rubric_sha256,
    inferred_goal_question,
    statement_questions,
    trajectory_question,
)
from agent_evals.judging.verdicts import read_verdict
from agent_evals.llm.source import ModelSource
from agent_evals.record import Judgement, KitError, RunRecord, Verdict, judgement_key, question_key

log = logging.getLogger(__name__)


class JudgeReplyError(KitError):
    """The judge answered twice without a verdict (kind ``model``: the row is an error, not a failure)."""

    kind = "model"


class JudgeConfigError(KitError, ValueError):
    """A judged check cannot be asked as configured (kind ``config``)."""

    kind = "config"


@dataclass(frozen=True)
class JudgedCheck:
    name: str
    config: Any
    informative: bool = False

    @property
    def key(self) -> str:
        return judgement_key(self.name, self.config)


def judged_checks(checks: Sequence[CheckRef], goal: str | None) -> list[JudgedCheck]:
    """The test's judged checks in order (a weight-0 one is informative), and an informative
    ``goal_reached`` for a case with a goal that does not list one."""
    found = [JudgedCheck(c.name, c.config, c.informative) for c in checks if c.name in JUDGED_CHECKS]
    if goal and goal.strip() and not any(c.name == "goal_reached" for c in found):
        found.append(JudgedCheck("goal_reached", None, informative=True))
    return found


async def judge_conversation(
    checks: Sequence[JudgedCheck], record: RunRecord, *, goal: str | None, mode: RunMode, models: ModelSource
) -> list[Judgement]:
    """Every judged check's verdicts (or why it was not graded); see the module docstring."""
    if not checks:
        return []
    why = mode.judge_unavailable()
    out = []
    for check in checks:
        if why is not None:
            out.append(Judgement(check.name, check.key, not_graded=why, informative=check.informative))
            continue
        verdicts, model = [], ""
        for index, question in enumerate(questions_for(check, record, goal)):
            verdict, model = await _ask(check, question, question_key(check.key, index), mode, models)
            verdicts.append(verdict)
        out.append(Judgement(check.name, check.key, tuple(verdicts), model=model, informative=check.informative,
                             rubric=rubric_sha256(check.name)))
    return out


def questions_for(check: JudgedCheck, record: RunRecord, goal: str | None) -> list[Question]:
    config = parse_check_config(check.name, check.config)
    if check.name == "goal_reached":
        target = config.goal or goal
        if not target and record.user.kind == "human":  # a production conversation: no stated goal
            return [inferred_goal_question(record)]
        if not target:
            raise JudgeConfigError(
                "goal_reached: this case has no goal to judge: give vars.simulated_user.goal, or config.goal"
            )
        return [goal_question(record, target)]
    if check.name == "expected_statements":
        return statement_questions(record, config.statements, config.about)
    return [trajectory_question(record, config.expected, config.notes)]


async def _ask(
    check: JudgedCheck, question: Question, key: str, mode: RunMode, models: ModelSource
) -> tuple[Verdict, str]:
    problem = None
    for attempt in range(1, JUDGE_ATTEMPTS + 1):
        response = await mode.ask_judge(models, key, question.messages, temperature=0.0)
        verdict, problem = read_verdict(response, question.subject, scored=question.scored)
        if verdict is not None:
            return verdict, response.model
        log.warning("the judge's reply to %s (%s) is not a verdict (attempt %d/%d): %s",
                    check.name, question.subject, attempt, JUDGE_ATTEMPTS, problem)
    raise JudgeReplyError(
        f"the judge's reply to {check.name} ({_short(question.subject)}) was not a verdict, twice: {problem}"
    )


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
