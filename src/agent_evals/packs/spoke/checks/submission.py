"""Which configuration the agent submitted, when it called the submitting tool.

Rule (documented in docs/assertions.md): among the calls of the tool whose arguments
parsed to an object holding the argument (an object, or a string holding a JSON
object), the **last successful call** (``is_error`` false) is used; when every such
call errored, the last of them. The successful call is the one a pull request came
from; an erroring retry after it changed nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_evals.authoring import GradingResult, RunRecord, ToolCall, count_label, fail, name_matches, read_record

DEFAULT_TOOL = "create_spoke_pull_request"
DEFAULT_ARGUMENT = "config"


@dataclass(frozen=True)
class Submission:
    """The chosen call and the configuration object it carried."""

    call: ToolCall
    config: dict[str, Any]
    from_string: bool  # the argument was a JSON string, not an object
    candidates: int  # how many calls carried a usable configuration

    def describe(self) -> str:
        """E.g. ``create_spoke_pull_request call 4, turn 2, the last successful of 2 calls with a ...``."""
        text = ", parsed from a JSON string" if self.from_string else ""
        if self.candidates == 1:
            which = "the only call with a configuration"
        elif self.call.is_error:
            which = f"the last of {self.candidates} calls with a configuration, all errored"
        else:
            which = f"the last successful of {self.candidates} calls with a configuration"
        return f"{self.call.name} {self.call.where()}{text}, {which}"


class NoSubmission(ValueError):
    """No call of the tool carried a usable configuration; the message says why."""


def configuration_of(call: ToolCall, argument: str) -> tuple[dict[str, Any], bool] | None:
    """The object in ``argument`` of ``call`` (and whether it came from a JSON string), or None."""
    if call.arguments is None or argument not in call.arguments:
        return None
    value = call.arguments[argument]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
        return (value, True) if isinstance(value, dict) else None
    return (value, False) if isinstance(value, dict) else None


def select_submission(calls: Sequence[ToolCall], tool: str, argument: str) -> Submission:
    """The submission by the rule above; NoSubmission when there is none."""
    of_tool = [call for call in calls if name_matches(call.name, tool)]
    if not of_tool:
        actual = count_label(call.name for call in calls) or "no tool calls"
        raise NoSubmission(
            f"{tool} was never called, so there is no submitted configuration (calls: {actual})"
        )
    usable = [(call, found) for call in of_tool if (found := configuration_of(call, argument)) is not None]
    if not usable:
        raise NoSubmission(
            f"{tool} was called {len(of_tool)} time(s) but no call had an object in argument {argument!r} "
            f"({'; '.join(_why_not(call, argument) for call in of_tool)})"
        )
    successful = [item for item in usable if not item[0].is_error]
    call, (config, from_string) = (successful or usable)[-1]
    return Submission(call=call, config=config, from_string=from_string, candidates=len(usable))


def submitted(check: str, metadata: Any, tool: str, argument: str) -> tuple[RunRecord, Submission] | GradingResult:
    """The row's record and what it submitted, or the failing result of ``check`` that says why
    there is nothing to grade."""
    run = read_record(metadata)
    try:
        return run, select_submission(run.tool_calls, tool, argument)
    except NoSubmission as err:
        return fail(f"{check}: {err}")


def _why_not(call: ToolCall, argument: str) -> str:
    if call.arguments is None:
        return f"{call.where()}: arguments were not a JSON object"
    if argument not in call.arguments:
        keys = ", ".join(call.arguments) or "none"
        return f"{call.where()}: no {argument!r} (arguments: {keys})"
    return f"{call.where()}: {argument!r} is a {type(call.arguments[argument]).__name__}, not an object"
