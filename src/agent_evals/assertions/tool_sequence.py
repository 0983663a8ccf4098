"""``tool_sequence``: the agent's tool calls follow the expected sequence.

Config: ``expected`` (list of tool names or globs, required), ``mode`` (`SequenceMode`,
default ``in_order``), ``ignore`` (names or globs dropped from the actual calls before
matching). ``expected: []`` means the agent made no (other than ignored) tool call, in every
mode but ``superset``, which refuses it (it would pass every run). Version 2: in ``in_order``
mode, ``expected: []`` passed any run (version 1's bug).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args

from agent_evals.assertions._config import ConfigError, ConfigReader
from agent_evals.assertions._context import grader
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.assertions._run import read_record
from agent_evals.assertions.names import count_label, first_match
from agent_evals.assertions.sequence import SequenceMode, match_sequence

VERSION = 2  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

MODES: tuple[SequenceMode, ...] = get_args(SequenceMode)
ORDERED: tuple[SequenceMode, ...] = ("strict", "in_order")


@dataclass(frozen=True)
class ToolSequenceConfig:
    expected: tuple[str, ...]
    mode: SequenceMode = "in_order"
    ignore: tuple[str, ...] = ()


def parse_config(raw: Any) -> ToolSequenceConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("expected", "mode", "ignore"))
    cfg = ToolSequenceConfig(
        expected=reader.string_list("expected", required=True),
        mode=reader.choice("mode", MODES, "in_order"),
        ignore=reader.string_list("ignore", required=False),
    )
    if not cfg.expected and cfg.mode == "superset":
        raise ConfigError(
            "config.expected is [] with mode superset, which every run passes (any calls are a superset of none); "
            "for \"no tool call\" use another mode (expected: [] means no call in strict, in_order, unordered and "
            "subset), to forbid some tools use tool_not_executed"
        )
    return cfg


@grader("tool_sequence")
def grade(config: Any, metadata: Any) -> GradingResult:
    """Grade the tool calls in ``metadata`` against the sequence in ``config``."""
    cfg = parse_config(config)
    names = [call.name for call in read_record(metadata).tool_calls]
    kept = [name for name in names if first_match(name, cfg.ignore) is None]
    ignored = [name for name in names if first_match(name, cfg.ignore) is not None]
    match = match_sequence(cfg.expected, kept, cfg.mode)
    arrow = " → " if cfg.mode in ORDERED else ", "
    text = (
        f"tool_sequence {cfg.mode}: expected {arrow.join(cfg.expected) or '(no tool calls)'}; "
        f"actual {', '.join(kept) or '(no tool calls)'}"
    )
    if ignored:
        text += f" (ignored: {count_label(ignored)})"
    if match.passed:
        return make_result(True, f"{text}; matches")
    return make_result(False, f"{text}; " + "; ".join(match.problems))
