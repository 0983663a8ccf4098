"""The alert: thresholds on the live report (``evals/live-thresholds.yaml``) that make ``live`` exit 1.

::

    min_pass_rate: 0.9        # the live pass rate over graded conversations, all agents
    agents:                   # per agent
      helpdesk: {min_pass_rate: 0.85}
    max_error_rate: 0.1       # errors / conversations scored
    max_failure_share:        # a failure pattern (a metric, tool or JSON path) → the share of graded
      forbidden_tools: 0      #   conversations it may be seen in; `default` for any other pattern
      default: 0.25
    min_graded: 20            # with fewer graded conversations the rates are not judged (said so)
    compare: estimate         # or lower_bound: the 95% interval's lower bound must clear min_pass_rate

Every key is optional. Problems in the file are found before anything is read, one line each
with the file and line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from agent_evals.live.live_report import LiveReport, Tally
from agent_evals.suites.problems import Problem, did_you_mean
from agent_evals.suites.files import Located, SuiteFileError, read_yaml

THRESHOLDS_FILE = "live-thresholds.yaml"
Compare = Literal["estimate", "lower_bound"]
COMPARES: tuple[Compare, ...] = get_args(Compare)
_KEYS = ("min_pass_rate", "agents", "max_error_rate", "max_failure_share", "min_graded", "compare")


@dataclass(frozen=True)
class Thresholds:
    path: Path
    min_pass_rate: float | None = None
    agents: dict[str, float] = field(default_factory=dict)
    max_error_rate: float | None = None
    max_failure_share: dict[str, float] = field(default_factory=dict)
    min_graded: int = 1
    compare: Compare = "estimate"


def load_thresholds(path: Path) -> tuple[Thresholds | None, list[Problem]]:
    try:
        data, lines = read_yaml(path)
    except SuiteFileError as exc:
        return None, [Problem(exc.where, exc.detail)]
    at = Located(path, lines.get(id(data)) if data is not None else None)
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        return None, [Problem(at, "the thresholds file is a mapping (see docs/live.md#alerts)")]
    problems = [Problem(at, f"unknown key {k!r}; allowed: {', '.join(_KEYS)}{did_you_mean(str(k), list(_KEYS))}")
                for k in data if k not in _KEYS]
    share = _shares(data.get("max_failure_share"), at, problems)
    agents = {}
    for agent, raw in (data.get("agents") or {}).items() if isinstance(data.get("agents"), Mapping) else ():
        value = raw.get("min_pass_rate") if isinstance(raw, Mapping) and set(raw) == {"min_pass_rate"} else None
        fraction = _fraction(value)
        if fraction is None:
            problems.append(Problem(Located(path, lines.get(id(raw))) if isinstance(raw, Mapping) else at,
                                    f"agents.{agent}: give {{min_pass_rate: <0..1>}}"))
        else:
            agents[str(agent)] = fraction
    minimum = data.get("min_graded", 1)
    if isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 1:
        problems.append(Problem(at, f"min_graded is {minimum!r}: give a whole number of at least 1"))
    if data.get("compare", "estimate") not in COMPARES:
        problems.append(Problem(at, f"compare is {data.get('compare')!r}; allowed: {', '.join(COMPARES)}"))
    for key in ("min_pass_rate", "max_error_rate"):
        if key in data and _fraction(data[key]) is None:
            problems.append(Problem(at, f"{key} is {data[key]!r}: give a share from 0 to 1 (e.g. 0.9)"))
    if problems:
        return None, problems
    return Thresholds(path, _fraction(data.get("min_pass_rate")), agents, _fraction(data.get("max_error_rate")),
                      share, int(minimum), data.get("compare", "estimate")), []


def _fraction(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        return None
    return float(value)


def _shares(raw: Any, at: Located, problems: list[Problem]) -> dict[str, float]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append(Problem(at, "max_failure_share: give {<metric, tool or path>: <share 0..1>, default: <share>}"))
        return {}
    out = {}
    for name, value in raw.items():
        if _fraction(value) is None:
            problems.append(Problem(at, f"max_failure_share.{name} is {value!r}: give a share from 0 to 1"))
        else:
            out[str(name)] = float(value)
    return out


def broken(thresholds: Thresholds, report: LiveReport) -> tuple[list[str], list[str]]:
    """(the thresholds crossed, one line each; notes such as too few conversations to judge)."""
    lines: list[str] = []
    notes: list[str] = []
    graded = report.total.graded
    if graded < thresholds.min_graded:
        notes.append(f"only {graded} graded conversation(s), fewer than min_graded {thresholds.min_graded}: "
                     "the pass rates and failure shares are not judged")
    else:
        if thresholds.min_pass_rate is not None:
            lines += _pass_rate("the live pass rate", report.total, thresholds.min_pass_rate, thresholds.compare)
        for agent, minimum in thresholds.agents.items():
            lines += _pass_rate(f"{agent}'s pass rate", report.by_agent.get(agent, Tally()), minimum, thresholds.compare)
        default = thresholds.max_failure_share.get("default")
        for name, share in report.pattern_shares().items():
            limit = thresholds.max_failure_share.get(name, default)
            if limit is not None and share > limit:
                lines.append(f"failure pattern {name}: in {share:.0%} of graded conversations, above {limit:.0%}")
    scored = report.total.graded + report.total.errors
    if thresholds.max_error_rate is not None and scored:
        rate = report.total.errors / scored
        if rate > thresholds.max_error_rate:
            lines.append(f"error rate {rate:.0%} ({report.total.errors}/{scored}) is above {thresholds.max_error_rate:.0%}")
    return lines, notes


def _pass_rate(what: str, tally: Tally, minimum: float, compare: Compare) -> list[str]:
    if not tally.graded:
        return []
    low, _ = tally.interval()
    value = low if compare == "lower_bound" else (tally.rate or 0.0)
    shown = f"{tally.rate:.0%} (95% CI lower bound {low:.0%})" if compare == "lower_bound" else f"{tally.rate:.0%}"
    return [f"{what} {shown} is below {minimum:.0%}"] if value < minimum else []
