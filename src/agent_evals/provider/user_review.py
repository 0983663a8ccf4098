"""The provider's step that checks the simulated user (:mod:`agent_evals.user_checks`): after the
conversation and its end-state snapshot, before the judged checks of the agent.

The rules decide first; what they cannot decide is asked of the judge (through the run mode,
within the conversation's deadline). A finding makes the row **invalid**: Promptfoo gets an
``error`` starting ``[user_simulator] invalid: C07 turn 2, the user invented region 'westus9'``
(neither a pass nor a fail; the kit's checks are still graded into ``metadata.checks``, but the
judge is not asked about the agent of a spoiled conversation). Fixed user messages are not
checked (``user_review.skipped`` says so), nor is anything when the provider config says
``user_checks: false``; ``user_checks: {skip: [off_goal]}`` switches single checks off.
"""

from __future__ import annotations

import asyncio
import time

from agent_evals.conversation.metering import MeteredModels
from agent_evals.conversation.modes import RunMode
from agent_evals.conversation.users import BaseUserSimulator, SimulatedUser
from agent_evals.judging.user_questions import judge_user
from agent_evals.packs import Pack
from agent_evals.provider.config import ProviderConfig
from agent_evals.provider.deadline import MARGIN_S, ConversationTimeout
from agent_evals.record import RunRecord, UserReview
from agent_evals.user_checks import UserBrief, review, with_judged

OFF = "the user checks are off (provider config user_checks: false)"
INVALID_KIND = "user_simulator"


async def review_user(
    config: ProviderConfig, record: RunRecord, user: BaseUserSimulator | None, pack: Pack, mode: RunMode,
    models: MeteredModels, *, started: float, limit_s: float,
) -> None:
    """Fill ``record.user_review`` (the judge's questions share the conversation's deadline)."""
    if config.user_checks is False:
        record.user_review = UserReview(skipped=OFF)
        return
    brief = UserBrief.of(config.simulated_user) if config.simulated_user is not None else UserBrief()
    prompt = user.system_prompt if isinstance(user, SimulatedUser) else ""
    skip = () if config.user_checks is True else tuple(config.user_checks.skip)
    rules = review(record, brief, pack.user_framing, prompt=prompt, skip=skip)
    if rules.review.invalid or not rules.questions:
        record.user_review = rules.review
        return
    left = max(limit_s - (time.monotonic() - started), 0.0) + MARGIN_S / 2
    try:
        answers = await asyncio.wait_for(judge_user(rules.questions, record, brief, mode=mode, models=models), left)
    except TimeoutError:
        raise ConversationTimeout(
            f"asking the judge about the simulated user ran past the deadline ({limit_s:g} s, plus {MARGIN_S / 2:g} s)"
        ) from None
    record.user_review = with_judged(rules, answers)


def invalid_error(record: RunRecord) -> str | None:
    """The Promptfoo ``error`` of a row the user spoiled, else None."""
    found = record.user_review
    if found is None or not found.invalid:
        return None
    return f"[{INVALID_KIND}] {found.summary(record.case_id)}"
