"""``argument_match``: a tool was called with the expected arguments.

Config: ``tool`` (name or glob, required), ``args`` (object, required), ``mode``
(``subset`` default: every expected key matches recursively, extra keys allowed;
``exact``: no extra keys at any depth), ``occurrence`` (which calls must match:
``any`` default, ``first``, ``last``, ``all``), ``ignore_case`` (strings compare
caselessly; default false). Value rules are those of `agent_evals.assertions.values`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from agent_evals.assertions._config import ConfigReader
from agent_evals.assertions._context import grader
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.assertions._run import ToolCall, read_record
from agent_evals.assertions.names import count_label, name_matches
from agent_evals.assertions.values import MatchMode, Mismatch, compare, render

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

Occurrence = Literal["any", "first", "last", "all"]
OCCURRENCES: tuple[Occurrence, ...] = get_args(Occurrence)
MODES: tuple[MatchMode, ...] = get_args(MatchMode)
MAX_SHOWN = 8  # mismatch lines shown per call


@dataclass(frozen=True)
class ArgumentMatchConfig:
    tool: str
    args: dict[str, Any]
    mode: MatchMode = "subset"
    occurrence: Occurrence = "any"
    ignore_case: bool = False


def parse_config(raw: Any) -> ArgumentMatchConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("tool", "args", "mode", "occurrence", "ignore_case"))
    return ArgumentMatchConfig(
        tool=reader.string("tool", what="a tool name or glob"),
        args=dict(reader.mapping("args", required=True, what="an object of expected arguments") or {}),
        mode=reader.choice("mode", MODES, "subset"),
        occurrence=reader.choice("occurrence", OCCURRENCES, "any"),
        ignore_case=reader.boolean("ignore_case", False),
    )


def call_mismatches(call: ToolCall, cfg: ArgumentMatchConfig) -> list[Mismatch]:
    """The mismatches of one call's arguments (unparsed arguments are one mismatch at ``/``)."""
    if call.arguments is None:
        return [Mismatch("", cfg.args, call.raw_arguments, "the arguments were not a JSON object")]
    return compare(cfg.args, call.arguments, mode=cfg.mode, ignore_case=cfg.ignore_case)


@grader("argument_match")
def grade(config: Any, metadata: Any) -> GradingResult:
    """Grade the calls of ``config.tool`` in ``metadata`` against ``config.args``."""
    cfg = parse_config(config)
    calls = read_record(metadata).tool_calls
    matching = [call for call in calls if name_matches(call.name, cfg.tool)]
    which = "every call" if cfg.occurrence == "all" else f"{cfg.occurrence} call"
    head = f"argument_match: {cfg.tool} {cfg.mode} {render(cfg.args, limit=200)} ({which})"
    if not matching:
        actual = count_label(call.name for call in calls) or "no tool calls"
        return make_result(False, f"{head}: {cfg.tool} was never called (calls: {actual})")
    checked = _select(matching, cfg.occurrence)
    results = [(call, call_mismatches(call, cfg)) for call in checked]
    good = [call for call, found in results if not found]
    passed = bool(good) if cfg.occurrence == "any" else len(good) == len(checked)
    if passed:
        where = "; ".join(f"{call.name} {call.where()}" for call in good)
        return make_result(True, f"{head}: matches ({where})")
    failures = "\n".join(_describe(call, found) for call, found in results if found)
    return make_result(
        False, f"{head}: {len(checked) - len(good)} of {len(checked)} call(s) differ\n{failures}"
    )


def _select(calls: list[ToolCall], occurrence: Occurrence) -> list[ToolCall]:
    if occurrence == "first":
        return calls[:1]
    if occurrence == "last":
        return calls[-1:]
    return calls


def _describe(call: ToolCall, found: list[Mismatch]) -> str:
    lines = [f"{call.name} ({call.where()}):"]
    lines += [f"  {mismatch.describe()}" for mismatch in found[:MAX_SHOWN]]
    if len(found) > MAX_SHOWN:
        lines.append(f"  … and {len(found) - MAX_SHOWN} more")
    return "\n".join(lines)
