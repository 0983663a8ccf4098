"""The gate file (``evals/gate.yaml``): the thresholds a run must meet to ship.

Every key is optional; a missing file is an error (the gate must be chosen, not assumed)::

    k: 3                          # pass^k's k (default: each case's runs)
    require_complete: true        # an incomplete run never passes (default true)
    max_errors: 0                 # error rows at most (default 0)
    max_flaky: 0                  # flaky cases at most (default: no limit)
    min_pass_hat_k:               # the mean pass^k of the cases of a priority, a group, or all
      all: 0.9
      priority: {smoke: 1.0}
      group: {blocked: 1.0}
    no_regressions: [smoke]       # priorities where no case may regress against the baseline ([all]: all)
    no_significant_regression: [all]  # priorities where no case, nor their pooled runs, got significantly worse
    alpha: 0.05                   # the family-wise false-alarm rate of no_significant_regression
    min_baseline_runs: 3          # a baseline case with fewer graded runs is unreliable
    baseline_max_age_days: 30     # an older baseline is stale (a warning)
    max_cost_usd: 5.0             # agent + simulated user + judge, at most
    allow_replay: false           # a replay (the models' answers as recorded) may hold the gate
    allow_not_graded: false       # a run with deciding checks not graded may hold the gate
    max_invalid: 0                # runs the simulated user spoiled (after re-runs), at most (default: no limit)

:func:`load_gate` validates it strictly (an unknown key or an out-of-range value is one
line naming the file, the key, the value and what is allowed) and raises
:class:`ReportInputError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from agent_evals.report.errors import ReportInputError

Scope = Literal["all", "priority", "group"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
ALL = "all"
KEYS = (
    "k",
    "require_complete",
    "max_errors",
    "max_flaky",
    "min_pass_hat_k",
    "no_regressions",
    "no_significant_regression",
    "alpha",
    "min_baseline_runs",
    "baseline_max_age_days",
    "max_cost_usd",
    "allow_replay",
    "allow_not_graded",
    "max_invalid",
)


@dataclass(frozen=True)
class Gate:
    k: int | None = None
    require_complete: bool = True
    max_errors: int = 0
    max_flaky: int | None = None
    min_pass_hat_k: tuple[tuple[Scope, str, float], ...] = ()  # (scope, name, threshold)
    no_regressions: tuple[str, ...] = ()
    no_significant_regression: tuple[str, ...] = ()
    alpha: float = 0.05
    min_baseline_runs: int = 3
    baseline_max_age_days: int = 30
    max_cost_usd: float | None = None
    allow_replay: bool = False
    allow_not_graded: bool = False
    max_invalid: int | None = None
    source: str = field(default="", compare=False)


def load_gate(path: Path) -> Gate:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportInputError(f"{path}: no gate file (write one, see docs/report.md)") from None
    except OSError as exc:
        raise ReportInputError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return parse_gate(_yaml(text, path), str(path))


def parse_gate(raw: Any, source: str = "gate") -> Gate:
    """A :class:`Gate` from the parsed YAML, checked key by key."""
    if raw is None:
        return Gate(source=source)
    if not isinstance(raw, Mapping):
        raise _error(source, f"must be a mapping of the keys {', '.join(KEYS)}, got {type(raw).__name__}")
    unknown = [str(key) for key in raw if key not in KEYS]
    if unknown:
        raise _error(source, f"unknown key {unknown[0]!r}; allowed: {', '.join(KEYS)}")
    return Gate(
        k=_count(raw, "k", source, minimum=1),
        require_complete=_flag(raw, "require_complete", source, default=True),
        max_errors=_count(raw, "max_errors", source, default=0) or 0,
        max_flaky=_count(raw, "max_flaky", source),
        min_pass_hat_k=_thresholds(raw.get("min_pass_hat_k"), source),
        no_regressions=_names(raw.get("no_regressions"), "no_regressions", source),
        no_significant_regression=_names(raw.get("no_significant_regression"), "no_significant_regression", source),
        alpha=_alpha(raw, source),
        min_baseline_runs=_count(raw, "min_baseline_runs", source, minimum=1, default=3) or 3,
        baseline_max_age_days=_count(raw, "baseline_max_age_days", source, minimum=1, default=30) or 30,
        max_cost_usd=_amount(raw, "max_cost_usd", source),
        allow_replay=_flag(raw, "allow_replay", source, default=False),
        allow_not_graded=_flag(raw, "allow_not_graded", source, default=False),
        max_invalid=_count(raw, "max_invalid", source),
        source=source,
    )


def _yaml(text: str, path: Path) -> Any:
    import yaml  # lazy: keeps agent_evals.report.bless's start-up as small as it is

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ReportInputError(f"{path}:{where} not valid YAML: {problem}") from None


def _count(
    raw: Mapping[str, Any], key: str, source: str, *, minimum: int = 0, default: int | None = None
) -> int | None:
    value = raw.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _error(source, f"{key} is {value!r}; it must be an integer ≥ {minimum}")
    return value


def _flag(raw: Mapping[str, Any], key: str, source: str, *, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise _error(source, f"{key} is {value!r}; it must be true or false")
    return value


def _amount(raw: Mapping[str, Any], key: str, source: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise _error(source, f"{key} is {value!r}; it must be a number ≥ 0")
    return float(value)


def _alpha(raw: Mapping[str, Any], source: str) -> float:
    value = raw.get("alpha", 0.05)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 0.5:
        raise _error(source, f"alpha is {value!r}; a false-alarm rate is a number above 0 and below 0.5 (e.g. 0.05)")
    return float(value)


def _thresholds(raw: Any, source: str) -> tuple[tuple[Scope, str, float], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise _error(source, f"min_pass_hat_k must be a mapping with keys {', '.join(SCOPES)}, got {raw!r}")
    out: list[tuple[Scope, str, float]] = []
    for scope, value in raw.items():
        if scope not in SCOPES:
            raise _error(source, f"min_pass_hat_k: unknown key {scope!r}; allowed: {', '.join(SCOPES)}")
        where = f"min_pass_hat_k.{scope}"
        if scope == "all":
            out.append(("all", ALL, _fraction(value, where, source)))
            continue
        if not isinstance(value, Mapping):
            raise _error(
                source, f"{where} must map each {scope} to a threshold, e.g. {{smoke: 1.0}}; got {value!r}"
            )
        out += [(scope, str(name), _fraction(v, f"{where}.{name}", source)) for name, v in value.items()]
    return tuple(out)


def _fraction(value: Any, where: str, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise _error(source, f"{where} is {value!r}; a pass^k threshold is a number from 0 to 1")
    return float(value)


def _names(raw: Any, key: str, source: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(item, str) and item for item in raw):
        raise _error(source, f"{key} must be a list of priorities (or [all]), got {raw!r}")
    return tuple(raw)


def _error(source: str, message: str) -> ReportInputError:
    return ReportInputError(f"{source}: {message}")
