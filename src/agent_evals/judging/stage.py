"""Ask the judge about a finished conversation: one question per verdict, each retried once.

:func:`judge_conversation` runs in the provider's worker after the conversation (and its
end-state snapshot), through the run mode (:meth:`RunMode.ask_judge`): live on the judge's
model, recorded into the cassette with the question each reply answers, or replayed from
it. Its :class:`~agent_evals.record.Judgement` list goes into the run record's ``judged``,
where the judged checks' ``grade`` functions read it. Usage is the judge's
(:class:`~agent_evals.conversation.metering.MeteredModels`, role ``judge``).

* Judge unavailable (no judge model, ``JUDGE_MODEL=none``, a cassette recorded without
  one): each check's judgement is ``not_graded`` with the reason; nothing is asked.
* Graders fail as graders: a reply that is not a verdict is asked for once more; a second
  one, or a judge model that fails (kind ``model``, after the model's own retries), makes that
  check ``not_graded``, naming why with the reply's first words. The row is never an error for
  it, and keeps every deterministic verdict (:mod:`agent_evals.provider.grading` decides what a
  check that was not graded does to the row).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_evals.assertions.registry import JUDGED_CHECKS, parse_check_config

from agent_evals.suites.check_ref import CheckRef
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
from agent_evals.llm.types import LLMError, Message
from agent_evals.record import Judgement, KitError, RunRecord, Verdict, judgement_key, question_key

log = logging.getLogger(__name__)


class NotAVerdict(Exception):
    """The judge could not give a verdict on one question (its replies were not verdicts, or its model
    failed); the message says why, with the reply's first words. Caught per check: the check is not graded."""


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
            if not check.informative:  # an informative check nobody could ask is not worth a line
                out.append(Judgement(check.name, check.key, not_graded=why))
            continue
        out.append(await _judge_one(check, questions_for(check, record, goal), mode, models))
    return out


async def _judge_one(check: JudgedCheck, questions: Sequence[Question], mode: RunMode, models: ModelSource) -> Judgement:
    """One check's verdicts, or the check not graded, saying which question the judge could not answer."""
    verdicts, model = [], ""
    for index, question in enumerate(questions):
        try:
            verdict, model = await _ask(check, question, question_key(check.key, index), mode, models)
        except NotAVerdict as exc:
            about = f" to {_short(question.subject)}" if len(questions) > 1 else ""
            why = str(exc).replace("the judge's reply", f"the judge's reply{about}", 1)
            log.warning("%s is not graded: %s", check.name, why)
            return Judgement(check.name, check.key, not_graded=why, model=model, informative=check.informative,
                             rubric=rubric_sha256(check.name))
        verdicts.append(verdict)
    return Judgement(check.name, check.key, tuple(verdicts), model=model, informative=check.informative,
                     rubric=rubric_sha256(check.name))


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
    verdict, problem, model = await ask_for_verdict(mode, models, key, question.messages, question.subject,
                                                    scored=question.scored, what=check.name)
    if verdict is None:
        raise NotAVerdict(problem)
    return verdict, model


async def ask_for_verdict(
    mode: RunMode, models: ModelSource, key: str, messages: Sequence[Message], subject: str, *, scored: bool = False,
    what: str = "a judged check",
) -> tuple[Verdict | None, str, str]:
    """``(verdict, "", model)``, or ``(None, why not, model)``: a reply that is not a verdict is asked for
    once more; a judge model that fails (kind ``model``) is no verdict either. Other errors (the budget,
    a replay that no longer fits) propagate: they stop the row."""
    problem: str | None = ""
    model = ""
    for attempt in range(1, JUDGE_ATTEMPTS + 1):
        try:
            response = await mode.ask_judge(models, key, messages, temperature=0.0)
        except LLMError as exc:
            if exc.kind != "model":
                raise
            return None, f"the judge model failed: {exc}", model
        model = response.model
        verdict, problem = read_verdict(response, subject, scored=scored)
        if verdict is not None:
            return verdict, "", model
        log.warning("the judge's reply to %s (%s) is not a verdict (attempt %d/%d): %s",
                    what, subject, attempt, JUDGE_ATTEMPTS, problem)
    times = "twice" if JUDGE_ATTEMPTS == 2 else f"{JUDGE_ATTEMPTS} times"
    return None, f"the judge's reply was not a verdict, {times}: {problem}", model


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
