"""``tool_not_executed``: none of the forbidden tools was called.

Config: ``tools`` (list of tool names or globs, required). An attempted call counts,
even one that returned an error (the agent still tried to do it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_evals.assertions._config import ConfigReader
from agent_evals.assertions._context import grader
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.assertions._run import read_record
from agent_evals.assertions.names import count_label, first_match

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)


@dataclass(frozen=True)
class ToolNotExecutedConfig:
    tools: tuple[str, ...]


def parse_config(raw: Any) -> ToolNotExecutedConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("tools",))
    return ToolNotExecutedConfig(tools=reader.string_list("tools", required=True, allow_empty=False))


# an attempted call counts whatever its outcome; the reason says what became of it
_OUTCOME_NOTES = {
    "tool_error": ", it returned an error",
    "refused": ", the agent loop refused it",
    "invalid_arguments": ", not run: its arguments were not a JSON object",
}


@grader("tool_not_executed")
def grade(config: Any, metadata: Any) -> GradingResult:
    """Fail when any call in ``metadata`` matches one of ``config.tools``."""
    cfg = parse_config(config)
    calls = read_record(metadata).tool_calls
    forbidden = ", ".join(cfg.tools)
    hits = []
    for call in calls:
        pattern = first_match(call.name, cfg.tools)
        if pattern is None:
            continue
        via = f" (matches {pattern})" if pattern != call.name else ""
        errored = _OUTCOME_NOTES.get(call.outcome or "", "")
        hits.append(f"{call.name}{via} in turn {call.turn} (call {call.index}{errored})")
    if hits:
        return make_result(
            False, f"tool_not_executed: forbidden tool called: {'; '.join(hits)}; forbidden: {forbidden}"
        )
    actual = count_label(call.name for call in calls) or "no tool calls"
    return make_result(True, f"tool_not_executed: none of {forbidden} was called (calls: {actual})")
