"""``tool_order``: order rules between tools, which hold whatever else the conversation did.

Config: ``rules`` (required, non-empty): a list of ``{before: <tool or glob>, then: <tool or glob>}``.
A rule holds when every call of ``then`` comes after a call of ``before`` that succeeded (outcome
``ok``), e.g. a configuration is validated before a pull request is opened. A conversation that
never calls ``then`` keeps the rule. Needs no reference case, so a live policy can use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_evals.assertions._config import ConfigError, ConfigReader, describe
from agent_evals.assertions._context import grader
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.assertions._run import read_record
from agent_evals.assertions.names import name_matches

NAME = "tool_order"
VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)


@dataclass(frozen=True)
class OrderRule:
    before: str
    then: str


@dataclass(frozen=True)
class ToolOrderConfig:
    rules: tuple[OrderRule, ...]


def parse_config(raw: Any) -> ToolOrderConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("rules",))
    items = reader.require("rules", "a list of {before: <tool>, then: <tool>} rules")
    if not isinstance(items, list) or not items:
        raise ConfigError(f"config.rules must be a non-empty list of {{before, then}} rules, got {describe(items)}")
    rules = []
    for position, item in enumerate(items):
        if not isinstance(item, Mapping) or set(item) != {"before", "then"}:
            raise ConfigError(f"config.rules[{position}] must be {{before: <tool>, then: <tool>}}, got {describe(item)}")
        before, then = item["before"], item["then"]
        if not all(isinstance(v, str) and v.strip() for v in (before, then)):
            raise ConfigError(f"config.rules[{position}]: before and then must be tool names or globs")
        rules.append(OrderRule(before, then))
    return ToolOrderConfig(tuple(rules))


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    cfg = parse_config(config)
    calls = read_record(metadata).tool_calls
    broken = []
    for rule in cfg.rules:
        ready = False
        for call in calls:
            if name_matches(call.name, rule.then) and not ready:
                broken.append(f"{call.name} at call {call.index} (turn {call.turn}) came before a successful {rule.before}")
                break
            if name_matches(call.name, rule.before) and call.outcome == "ok":
                ready = True
    rules = "; ".join(f"{r.before} before {r.then}" for r in cfg.rules)
    if broken:
        return make_result(False, f"{NAME}: {'; '.join(broken)} (rules: {rules})")
    return make_result(True, f"{NAME}: every rule holds ({rules})")
