"""Function-call metrics: precision and recall of names and of arguments, and reliability.

Calls are paired one to one; a repeated call is a separate call (calls are not merged
by name). Pairing is greedy by argument overlap: among all (expected, actual) pairs
whose names match, the pair with the most equal argument key/value pairs is taken
first; ties go to the earlier expected call, then the earlier actual call; each call is
used at most once. With exact names this pairs as many calls as possible.

* name precision = pairs / actual calls; name recall = pairs / expected calls;
* argument precision = equal expected arguments / expected arguments the paired calls
  gave (of the arguments the case names that the agent passed, the share it got right:
  an argument the case does not name is not counted against the agent); argument recall =
  equal expected arguments / expected arguments; both summed over the paired calls
  (top-level arguments, values compared deeply with `values.values_equal`);
* reliability = mean of name recall and argument recall.

On a run that does exactly what the case expects, every one of them is 1.0.

Empty denominators: a ratio over nothing is 1.0 when there was nothing to find
(no expected calls, or paired calls without arguments) and 0.0 when expected calls
went unpaired.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_evals.assertions.names import name_matches
from agent_evals.assertions.values import values_equal


@dataclass(frozen=True)
class ExpectedCall:
    name: str  # a tool name or glob
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ActualCall:
    name: str
    arguments: Mapping[str, Any]  # {} when the arguments did not parse
    index: int  # 1-based position in the conversation


@dataclass(frozen=True)
class Pair:
    expected: int  # index into the expected calls
    actual: int  # index into the actual calls
    equal: tuple[str, ...]  # argument keys with equal values
    expected_keys: int
    actual_keys: int
    given_keys: int  # expected argument keys the actual call has (with any value)


@dataclass(frozen=True)
class CallMetrics:
    pairs: tuple[Pair, ...]
    unpaired_expected: tuple[int, ...]
    unpaired_actual: tuple[int, ...]
    name_precision: float
    name_recall: float
    argument_precision: float
    argument_recall: float

    @property
    def reliability(self) -> float:
        return (self.name_recall + self.argument_recall) / 2

    def named_scores(self) -> dict[str, float]:
        return {
            "function_name_precision": self.name_precision,
            "function_name_recall": self.name_recall,
            "argument_precision": self.argument_precision,
            "argument_recall": self.argument_recall,
            "reliability": self.reliability,
        }


def equal_keys(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> tuple[str, ...]:
    """The expected argument keys whose values the actual call has, equal."""
    return tuple(key for key, value in expected.items() if key in actual and values_equal(value, actual[key]))


def pair_calls(expected: Sequence[ExpectedCall], actual: Sequence[ActualCall]) -> list[Pair]:
    """One-to-one pairs by best argument overlap first (see the module docstring)."""
    candidates = [
        Pair(e, a, equal_keys(want.arguments, got.arguments), len(want.arguments), len(got.arguments),
             sum(1 for key in want.arguments if key in got.arguments))
        for e, want in enumerate(expected)
        for a, got in enumerate(actual)
        if name_matches(got.name, want.name)
    ]
    candidates.sort(key=lambda pair: (-len(pair.equal), pair.expected, pair.actual))
    used_expected: set[int] = set()
    used_actual: set[int] = set()
    pairs = []
    for pair in candidates:
        if pair.expected in used_expected or pair.actual in used_actual:
            continue
        used_expected.add(pair.expected)
        used_actual.add(pair.actual)
        pairs.append(pair)
    return sorted(pairs, key=lambda pair: pair.expected)


def _ratio(part: int, whole: int, empty: float) -> float:
    return part / whole if whole else empty


def call_metrics(expected: Sequence[ExpectedCall], actual: Sequence[ActualCall]) -> CallMetrics:
    """Pair the calls and compute the metrics."""
    pairs = pair_calls(expected, actual)
    nothing_missed = 1.0 if pairs or not expected else 0.0
    equal = sum(len(pair.equal) for pair in pairs)
    paired_expected = {pair.expected for pair in pairs}
    paired_actual = {pair.actual for pair in pairs}
    return CallMetrics(
        pairs=tuple(pairs),
        unpaired_expected=tuple(i for i in range(len(expected)) if i not in paired_expected),
        unpaired_actual=tuple(i for i in range(len(actual)) if i not in paired_actual),
        name_precision=_ratio(len(pairs), len(actual), 1.0 if not expected else 0.0),
        name_recall=_ratio(len(pairs), len(expected), 1.0),
        argument_precision=_ratio(equal, sum(pair.given_keys for pair in pairs), nothing_missed),
        argument_recall=_ratio(equal, sum(pair.expected_keys for pair in pairs), nothing_missed),
    )
