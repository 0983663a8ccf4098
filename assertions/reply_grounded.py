"""Promptfoo assertion ``reply_grounded``: every address, link, e-mail (or other configured value)
in the agent's answer comes from what a tool returned or what the user said.

Settings go under the assertion's ``config:``; see docs/assertions.md. The logic lives in
``agent_evals.assertions.reply_grounded``.
"""

from typing import Any

from agent_evals.assertions import GradingResult, grade_from_context
from agent_evals.assertions.reply_grounded import grade


def get_assert(output: Any, context: dict[str, Any]) -> GradingResult:
    return grade_from_context(grade, context)


def get_assert_not(output: Any, context: dict[str, Any]) -> GradingResult:
    """The check's ``not-`` form (``type: not-python``, as the suites' hook points it here)."""
    return grade_from_context(grade, context, negated=True)
