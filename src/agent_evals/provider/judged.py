"""The provider's judging step: after the conversation and its snapshot, before the run mode
closes (so a recording keeps the judge's replies), ask the judge about the judged checks.

The judging shares the conversation's deadline, with half of the margin below Promptfoo's
worker timeout as grace (:mod:`agent_evals.provider.deadline`): past it, the row is an error
of kind ``timeout``. A conversation that ended in an error is not judged (its row is not graded).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from agent_evals.suites.check_ref import CheckRef
from agent_evals.conversation.metering import MeteredModels
from agent_evals.conversation.modes import RunMode
from agent_evals.judging import judge_conversation, judged_checks
from agent_evals.provider.config import ProviderConfig
from agent_evals.provider.deadline import MARGIN_S, ConversationTimeout
from agent_evals.record import Judgement, RunRecord, judgement_key

SPOILED = "the simulated user spoiled the conversation (the row is invalid): the agent is not judged on it"


async def judge_row(
    config: ProviderConfig, checks: Sequence[CheckRef], record: RunRecord, mode: RunMode, models: MeteredModels,
    *, started: float, limit_s: float,
) -> None:
    """Fill ``record.judged`` (raises the judge's errors for the caller to end the row with)."""
    if record.end is None or record.end.reason == "error":
        return
    goal = case_goal(config)
    wanted = judged_checks(checks, goal)
    if not wanted:
        return
    if record.user_review is not None and record.user_review.invalid:  # nothing is asked about the agent
        record.judged = [Judgement(c.name, c.key, not_graded=SPOILED) for c in wanted if not c.informative]
        return
    left = max(limit_s - (time.monotonic() - started), 0.0) + MARGIN_S / 2
    try:
        record.judged = await asyncio.wait_for(
            judge_conversation(wanted, record, goal=goal, mode=mode, models=models), left
        )
    except TimeoutError:
        raise ConversationTimeout(
            f"judging the conversation ran past the deadline ({limit_s:g} s for the conversation and its judging, "
            f"plus {MARGIN_S / 2:g} s): a slow judge model, or too many statements"
        ) from None


def case_goal(config: ProviderConfig) -> str | None:
    """The simulated user's goal of a conversation case, if it has one."""
    spec = config.simulated_user
    if config.mode != "conversation" or spec is None or not spec.goal or not spec.goal.strip():
        return None
    return spec.goal


def informative_checks(record: RunRecord, checks: Sequence[CheckRef], asserts: Sequence[object]) -> list[CheckRef]:
    """The checks the provider asked the judge about on its own (goal_reached on a case that lists
    none, not even the hook's weight-0 entry), to be reported beside the test's own: graded, or
    NOT GRADED when the judge was asked and gave no verdict."""
    listed = {judgement_key(c.name, c.config) for c in checks}
    return [
        CheckRef(j.check, None, None, len(asserts), informative=True)
        for j in record.judged
        if j.informative and j.key not in listed
    ]
