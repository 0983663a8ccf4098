"""``function_call_metrics``: the line-of-business function-call metrics (see `metrics`).

Config: ``expected_calls`` (required: list of ``{name, arguments}``, ``arguments``
optional), ``threshold`` (0..1, default 1.0: passes when reliability >= threshold),
``ignore`` (tool names or globs dropped from the actual calls). Named scores:
``function_name_precision``, ``function_name_recall``, ``argument_precision``,
``argument_recall``, ``reliability``; the score is the reliability.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_evals.assertions._config import ConfigError, ConfigReader, describe
from agent_evals.assertions._context import grader
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.assertions._run import read_record
from agent_evals.assertions.metrics import ActualCall, CallMetrics, ExpectedCall, call_metrics
from agent_evals.assertions.names import first_match

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

NAME = "function_call_metrics"


@dataclass(frozen=True)
class FunctionCallMetricsConfig:
    expected_calls: tuple[ExpectedCall, ...]
    threshold: float = 1.0
    ignore: tuple[str, ...] = ()


def parse_config(raw: Any) -> FunctionCallMetricsConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("expected_calls", "threshold", "ignore"))
    items = reader.require("expected_calls", "a list of {name, arguments} objects")
    if not isinstance(items, list):
        raise ConfigError(
            f"config.expected_calls must be a list of {{name, arguments}} objects, got {describe(items)}"
        )
    return FunctionCallMetricsConfig(
        expected_calls=tuple(_expected_call(index, item) for index, item in enumerate(items)),
        threshold=reader.number("threshold", minimum=0.0, maximum=1.0, default=1.0),
        ignore=reader.string_list("ignore", required=False),
    )


def _expected_call(index: int, item: Any) -> ExpectedCall:
    where = f"config.expected_calls[{index}]"
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where} must be an object {{name, arguments}}, got {describe(item)}")
    unknown = [key for key in item if key not in ("name", "arguments")]
    if unknown:
        raise ConfigError(
            f"{where} has unknown key(s) {', '.join(map(repr, unknown))}; allowed: name, arguments"
        )
    name, arguments = item.get("name"), item.get("arguments", {})
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}.name must be a tool name or glob, got {describe(name)}")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise ConfigError(f"{where}.arguments must be an object, got {describe(arguments)}")
    return ExpectedCall(name, dict(arguments))


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    """Compute the metrics of the tool calls in ``metadata`` against ``config.expected_calls``."""
    cfg = parse_config(config)
    calls = read_record(metadata).tool_calls
    actual = [
        ActualCall(call.name, call.arguments or {}, call.index)
        for call in calls
        if first_match(call.name, cfg.ignore) is None
    ]
    metrics = call_metrics(cfg.expected_calls, actual)
    passed = metrics.reliability >= cfg.threshold
    verdict = ">=" if passed else "<"
    head = (
        f"{NAME}: reliability {metrics.reliability:.2f} {verdict} threshold {cfg.threshold:.2f}; "
        f"names P {metrics.name_precision:.2f} R {metrics.name_recall:.2f}; "
        f"arguments P {metrics.argument_precision:.2f} R {metrics.argument_recall:.2f}"
    )
    reason = "\n".join([head, *_pairing(metrics, cfg.expected_calls, actual)])
    return make_result(passed, reason, score=metrics.reliability, named_scores=metrics.named_scores())


def _pairing(metrics: CallMetrics, expected: tuple[ExpectedCall, ...], actual: list[ActualCall]) -> list[str]:
    lines = []
    for pair in metrics.pairs:
        want, got = expected[pair.expected], actual[pair.actual]
        differ = [key for key in want.arguments if key not in pair.equal]
        note = f"; differ: {', '.join(differ)}" if differ else ""
        lines.append(
            f"  expected #{pair.expected + 1} {want.name} ↔ call {got.index} {got.name}: "
            f"{len(pair.equal)}/{pair.expected_keys} expected arguments equal, {pair.actual_keys} given{note}"
        )
    lines += [f"  expected #{i + 1} {expected[i].name}: no matching call" for i in metrics.unpaired_expected]
    lines += [f"  call {actual[i].index} {actual[i].name}: not expected" for i in metrics.unpaired_actual]
    return lines
