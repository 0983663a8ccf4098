"""``argument_match``: a tool was called with the expected arguments.

Config: ``tool`` (name or glob, required), ``args`` (required: an object, or a list of objects
— several accepted argument sets: a call matches when it matches any of them), ``mode``
(``subset`` default: every expected key matches recursively, extra keys allowed; ``exact``: no
extra keys at any depth; ``within``: the call's arguments lie within the reference — every key
it gives is expected, with a matching value, and expected keys may be left out), ``occurrence``
(which calls must match: ``any`` default, ``first``, ``last``, ``all``), ``ignore_case``
(strings compare caselessly; default false), and what matching may overlook or judge its own
way (:mod:`agent_evals.assertions.arg_rules`): ``ignore`` (paths or keys, globs allowed),
``defaults`` (``{path or key: value}``), ``tolerance`` (a number, or ``{absolute, relative}``),
``matcher`` (``module:function`` for the whole arguments), ``matchers`` (``{path: module:function}``).
Value rules are those of `agent_evals.assertions.values`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from agent_evals.assertions._config import ConfigError, ConfigReader, describe
from agent_evals.assertions._context import grader
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.assertions._run import ToolCall, read_record
from agent_evals.assertions.arg_rules import ArgRules, MatcherError, load_matcher, pointer
from agent_evals.assertions.names import count_label, name_matches
from agent_evals.assertions.values import MatchMode, Mismatch, compare, render

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

Occurrence = Literal["any", "first", "last", "all"]
OCCURRENCES: tuple[Occurrence, ...] = get_args(Occurrence)
MODES: tuple[MatchMode, ...] = get_args(MatchMode)
MAX_SHOWN = 8  # mismatch lines shown per call
KEYS = ("tool", "args", "mode", "occurrence", "ignore_case", "ignore", "defaults", "tolerance", "matcher", "matchers")


@dataclass(frozen=True)
class ArgumentMatchConfig:
    tool: str
    args: tuple[dict[str, Any], ...]  # the accepted argument sets
    mode: MatchMode = "subset"
    occurrence: Occurrence = "any"
    ignore_case: bool = False
    rules: ArgRules = field(default_factory=ArgRules)


def parse_config(raw: Any) -> ArgumentMatchConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, KEYS)
    return ArgumentMatchConfig(
        tool=reader.string("tool", what="a tool name or glob"),
        args=_argument_sets(reader.require("args", "an object of expected arguments, or a list of them")),
        mode=reader.choice("mode", MODES, "subset"),
        occurrence=reader.choice("occurrence", OCCURRENCES, "any"),
        ignore_case=reader.boolean("ignore_case", False),
        rules=_rules(reader),
    )


def _argument_sets(value: Any) -> tuple[dict[str, Any], ...]:
    sets = value if isinstance(value, list) else [value]
    if not sets or not all(isinstance(item, Mapping) for item in sets):
        raise ConfigError(
            f"config.args must be an object of expected arguments, or a non-empty list of them, got {describe(value)}"
        )
    return tuple(dict(item) for item in sets)


def _rules(reader: ConfigReader) -> ArgRules:
    defaults = reader.mapping("defaults", required=False, what="an object of {argument path or name: value}") or {}
    matchers = dict(reader.mapping("matchers", required=False, what="an object of {argument path: module:function}")
                    or {})
    if reader.has("matcher"):
        matchers["/"] = reader.string("matcher", what="module:function (a Python function judging the arguments)")
    loaded = {}
    for path, spec in matchers.items():
        if not isinstance(spec, str):
            raise ConfigError(f"config.matchers.{path} must be module:function, got {describe(spec)}")
        try:
            loaded["/" if path == "/" else pointer(str(path))] = (spec, load_matcher(spec))
        except ValueError as exc:
            raise ConfigError(f"config.matcher{'s.' + str(path) if path != '/' else ''}: {exc}") from None
    absolute, relative = _tolerance(reader)
    return ArgRules(
        ignore=tuple(pointer(p) for p in reader.string_list("ignore", required=False, what="a list of argument paths or names")),
        defaults={pointer(str(key)): value for key, value in defaults.items()},
        absolute=absolute, relative=relative, matchers=loaded,
    )


def _tolerance(reader: ConfigReader) -> tuple[float, float]:
    if not reader.has("tolerance"):
        return 0.0, 0.0
    value = reader.raw["tolerance"]
    parts = value if isinstance(value, Mapping) else {"absolute": value}
    unknown = [k for k in parts if k not in ("absolute", "relative")]
    numbers = [parts.get(k, 0) for k in ("absolute", "relative")]
    if unknown or not all(isinstance(n, int | float) and not isinstance(n, bool) and n >= 0 for n in numbers):
        raise ConfigError(
            f"config.tolerance must be a number >= 0 (absolute), or {{absolute, relative}} of numbers >= 0, got "
            f"{describe(value)}"
        )
    return float(numbers[0]), float(numbers[1])


def call_mismatches(call: ToolCall, cfg: ArgumentMatchConfig) -> list[Mismatch]:
    """The mismatches of one call's arguments against the closest accepted set (none: it matches one);
    unparsed arguments are one mismatch at ``/``."""
    if call.arguments is None:
        return [Mismatch("", cfg.args[0], call.raw_arguments, "the arguments were not a JSON object")]
    rules = None if cfg.rules.empty else cfg.rules
    best: list[Mismatch] | None = None
    for expected in cfg.args:
        found = compare(expected, call.arguments, mode=cfg.mode, ignore_case=cfg.ignore_case, rules=rules)
        if not found:
            return []
        best = found if best is None or len(found) < len(best) else best
    return best or []


@grader("argument_match")
def grade(config: Any, metadata: Any) -> GradingResult:
    """Grade the calls of ``config.tool`` in ``metadata`` against ``config.args``."""
    cfg = parse_config(config)
    calls = read_record(metadata).tool_calls
    matching = [call for call in calls if name_matches(call.name, cfg.tool)]
    which = "every call" if cfg.occurrence == "all" else f"{cfg.occurrence} call"
    shown = render(cfg.args[0] if len(cfg.args) == 1 else list(cfg.args), limit=200)
    extra = cfg.rules.describe()
    head = f"argument_match: {cfg.tool} {cfg.mode} {shown} ({which}{'; ' + extra if extra else ''})"
    if not matching:
        actual = count_label(call.name for call in calls) or "no tool calls"
        return make_result(False, f"{head}: {cfg.tool} was never called (calls: {actual})")
    checked = _select(matching, cfg.occurrence)
    try:
        results = [(call, call_mismatches(call, cfg)) for call in checked]
    except MatcherError as exc:  # the check fails with the matcher's message; the other checks still report
        return make_result(False, f"{head}: {exc}")
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
