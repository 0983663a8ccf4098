"""``tool_errors``: the share of tool calls that did not succeed stays within a limit.

Config (all optional): ``max_rate`` (0..1, default 0: no failed call), ``outcomes`` (which
outcomes count as failed; default every outcome but ``ok``: ``tool_error``, ``refused``,
``invalid_arguments``). The score is the share of calls that succeeded (1 without calls).
Needs no reference case, so a live policy can use it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from agent_evals.assertions._config import ConfigError, ConfigReader
from agent_evals.assertions._context import grader
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.assertions._run import read_record
from agent_evals.record import TOOL_OUTCOMES

NAME = "tool_errors"
VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)
FAILED = tuple(o for o in TOOL_OUTCOMES if o != "ok")


@dataclass(frozen=True)
class ToolErrorsConfig:
    max_rate: float = 0.0
    outcomes: tuple[str, ...] = FAILED


def parse_config(raw: Any) -> ToolErrorsConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("max_rate", "outcomes"))
    outcomes = reader.string_list("outcomes", required=False, allow_empty=False, what="a list of tool outcomes") or FAILED
    for outcome in outcomes:
        if outcome not in FAILED:
            raise ConfigError(f"config.outcomes has {outcome!r}, which is not allowed; allowed: {', '.join(FAILED)}")
    return ToolErrorsConfig(reader.number("max_rate", minimum=0.0, maximum=1.0, default=0.0), tuple(outcomes))


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    cfg = parse_config(config)
    calls = read_record(metadata).tool_calls
    if not calls:
        return make_result(True, f"{NAME}: no tool calls", score=1.0)
    failed = [c for c in calls if c.outcome in cfg.outcomes]
    rate = len(failed) / len(calls)
    score = 1.0 - rate
    if not failed:
        return make_result(True, f"{NAME}: all {len(calls)} tool call(s) succeeded", score=score)
    counts = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in Counter(c.name for c in failed).items())
    detail = "; ".join(f"{c.name} at call {c.index} ({c.outcome})" for c in failed[:5])
    passed = rate <= cfg.max_rate
    verb = "<=" if passed else ">"
    return make_result(
        passed, f"{NAME}: {len(failed)} of {len(calls)} tool call(s) failed ({rate:.0%} {verb} {cfg.max_rate:.0%}): "
        f"{counts}; {detail}", score=score,
    )
