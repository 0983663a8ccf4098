"""Promptfoo assertion ``changelog_entry``: the release notes committed on the agent's branch (or, with expect: none, nothing committed).

Settings go under the assertion's ``config:``; see docs/assertions.md. The logic lives in
``agent_evals.packs.release.checks.changelog_entry``.
"""

from typing import Any

from agent_evals.assertions import GradingResult, grade_from_context
from agent_evals.packs.release.checks.changelog_entry import grade


def get_assert(output: Any, context: dict[str, Any]) -> GradingResult:
    return grade_from_context(grade, context)


def get_assert_not(output: Any, context: dict[str, Any]) -> GradingResult:
    """The check's ``not-`` form (``type: not-python``, as the suites' hook points it here)."""
    return grade_from_context(grade, context, negated=True)
