"""Re-judging a stored row live (``agent-evals regrade --judge``): the judged checks asked again of
today's judge model about the recorded conversation, before the row is re-graded.

The questions are today's (:mod:`agent_evals.judging.questions`); the judge is the configured
one (``JUDGE_MODEL`` and an endpoint, as for a live run). The row's judge usage becomes what
this judging cost. A conversation that ended in an error is not judged (its row is not graded).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_evals.assertions.registry import kit_checks
from agent_evals.conversation.metering import MeteredModels
from agent_evals.conversation.modes import LiveMode
from agent_evals.judging.stage import judge_conversation, judged_checks
from agent_evals.record import RunRecord, Usage


async def rejudge(row: Mapping[str, Any]) -> bool:
    """Ask the judge again about ``row`` (in place); True when it had judged checks to ask."""
    metadata = (row.get("response") or {}).get("metadata")
    if row.get("failureReason") == 2 or not isinstance(metadata, dict):
        return False
    test = row.get("testCase") or {}
    user = (test.get("vars") or {}).get("simulated_user")
    goal = user.get("goal") if isinstance(user, Mapping) and isinstance(user.get("goal"), str) else None
    wanted = judged_checks(kit_checks(list(test.get("assert") or [])), goal)
    if not wanted:
        return False
    record = RunRecord.from_metadata(metadata)
    record.usage["judge"] = Usage()
    mode = LiveMode()
    models = MeteredModels(mode.models, record)
    try:
        record.judged = await judge_conversation(wanted, record, goal=goal, mode=mode, models=models)
    finally:
        await models.aclose()
    metadata["judged"] = [judgement.to_dict() for judgement in record.judged]
    if isinstance(metadata.get("usage"), dict):
        metadata["usage"]["judge"] = record.usage["judge"].as_dict()
    return True
