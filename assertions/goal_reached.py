"""Promptfoo assertion ``goal_reached``: did the conversation achieve the simulated user's goal (judged by the judge model).

Settings go under the assertion's ``config:``; see docs/assertions.md. The verdicts come from the
provider (the judge is asked in its worker); the logic lives in ``agent_evals.assertions.goal_reached``.
"""

from typing import Any

from agent_evals.assertions import GradingResult, grade_from_context
from agent_evals.assertions.goal_reached import grade


def get_assert(output: Any, context: dict[str, Any]) -> GradingResult:
    return grade_from_context(grade, context)


def get_assert_not(output: Any, context: dict[str, Any]) -> GradingResult:
    """The check's ``not-`` form (``type: not-python``, as the suites' hook points it here)."""
    return grade_from_context(grade, context, negated=True)
