"""Promptfoo assertion ``trajectory_quality``: the judge model compares the agent's route through the tools with the expected one.

Settings go under the assertion's ``config:``; see docs/assertions.md. The verdicts come from the
provider (the judge is asked in its worker); the logic lives in ``agent_evals.assertions.trajectory_quality``.
"""

from typing import Any

from agent_evals.assertions import GradingResult, grade_from_context
from agent_evals.assertions.trajectory_quality import grade


def get_assert(output: Any, context: dict[str, Any]) -> GradingResult:
    return grade_from_context(grade, context)


def get_assert_not(output: Any, context: dict[str, Any]) -> GradingResult:
    """The check's ``not-`` form (``type: not-python``, as the suites' hook points it here)."""
    return grade_from_context(grade, context, negated=True)
