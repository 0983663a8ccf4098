"""``goal_reached``: did the conversation achieve the simulated user's goal? Judged from the
transcript by the judge model (role ``judge``), one question.

Config (all optional): ``goal``, the goal to judge against (default: the case's
``vars.simulated_user.goal``). The provider judges the goal of every conversation case that
has one; only a case that lists this check lets the verdict decide the row (for the others it is
informative: in ``metadata.checks`` and a named score, never an assertion of the row).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_evals.assertions._config import ConfigReader
from agent_evals.assertions._context import grader
from agent_evals.assertions._judged import judged, judged_by
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.record import Judgement

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

NAME = "goal_reached"
INFORMATIVE = "informative: it does not decide the row"


@dataclass(frozen=True)
class GoalReachedConfig:
    goal: str | None = None


def parse_config(raw: Any) -> GoalReachedConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("goal",))
    return GoalReachedConfig(goal=reader.string("goal", what="the goal, as text") if reader.has("goal") else None)


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    parse_config(config)
    found = judged(NAME, config, metadata)
    if not isinstance(found, Judgement):
        return found
    verdict = found.verdicts[0]
    head = f"{NAME} ({INFORMATIVE})" if found.informative else NAME
    word = "reached" if verdict.passed else "not reached"
    reason = f"{head}: the goal was {word}: {verdict.reason}{judged_by(found)}"
    # an informative one is no entry of the row (a named score): its verdict stays the judge's
    return make_result(verdict.passed, reason, score=1.0 if verdict.passed else 0.0)
