"""``conversation``: how the conversation went: turns, end, step budget, convergence.

Config (all optional): ``max_turns`` (int >= 1), ``allowed_ends`` (subset of
``done``, ``gave_up``, ``max_turns``, ``error``; default ``[done]``), ``max_tool_calls``
(int >= 0, the step budget), ``expected_steps`` (int >= 1). Convergence =
``expected_steps`` / actual tool calls, capped at 1 (0 when the agent made no call although
steps were expected); it is the named score ``convergence`` and, on a pass, the score. It does
not decide pass/fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_evals.assertions._config import ConfigError, ConfigReader, describe
from agent_evals.assertions._context import grader
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.assertions._run import read_record
from agent_evals.record import END_REASONS, EndReason, is_one_of

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

NAME = "conversation"


@dataclass(frozen=True)
class ConversationConfig:
    max_turns: int | None = None
    allowed_ends: tuple[EndReason, ...] = ("done",)
    max_tool_calls: int | None = None
    expected_steps: int | None = None


def parse_config(raw: Any) -> ConversationConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("max_turns", "allowed_ends", "max_tool_calls", "expected_steps"))
    ends = reader.string_list(
        "allowed_ends", required=False, allow_empty=False, what="a list of conversation ends"
    )
    known = tuple(end for end in ends if is_one_of(end, END_REASONS))
    bad = [end for end in ends if end not in END_REASONS]
    if bad:
        allowed = ", ".join(END_REASONS)
        message = f"config.allowed_ends has {describe(bad)}, which is not allowed; allowed: {allowed}"
        raise ConfigError(message)
    return ConversationConfig(
        max_turns=reader.integer("max_turns", minimum=1),
        allowed_ends=known or ("done",),
        max_tool_calls=reader.integer("max_tool_calls", minimum=0),
        expected_steps=reader.integer("expected_steps", minimum=1),
    )


def convergence(expected_steps: int, actual_steps: int) -> float:
    """``expected_steps / actual_steps`` capped at 1; 0 when no step was taken (``expected_steps`` >= 1:
    an agent that never called a tool did not converge on anything)."""
    return min(1.0, expected_steps / actual_steps) if actual_steps else 0.0


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    """Check turns, end and step budget of the conversation in ``metadata``."""
    cfg = parse_config(config)
    run = read_record(metadata)
    steps = len(run.tool_calls)
    turns = run.user_messages_sent
    end = run.end.reason if run.end is not None else "error"
    problems = []
    if cfg.max_turns is not None and turns > cfg.max_turns:
        problems.append(f"{turns} turns > max_turns {cfg.max_turns}")
    if end not in cfg.allowed_ends:
        error = f" (error: {run.error})" if run.error else ""
        problems.append(f"ended {end!r}, allowed: {', '.join(cfg.allowed_ends)}{error}")
    if cfg.max_tool_calls is not None and steps > cfg.max_tool_calls:
        problems.append(f"{steps} tool calls > max_tool_calls {cfg.max_tool_calls}")
    facts = f"{turns} turn(s), ended {end!r}, {steps} tool call(s)"
    named: dict[str, float] = {}
    if cfg.expected_steps is not None:
        named["convergence"] = convergence(cfg.expected_steps, steps)
        facts += f", convergence {named['convergence']:.2f} ({cfg.expected_steps} expected steps)"
    if problems:
        return make_result(False, f"{NAME}: " + "; ".join(problems) + f" ({facts})", named_scores=named)
    return make_result(True, f"{NAME}: {facts}", score=named.get("convergence", 1.0), named_scores=named)
