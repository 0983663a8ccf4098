"""The result an assertion hands back to Promptfoo: ``{pass, score, reason, namedScores}``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

GradingResult = TypedDict(
    "GradingResult",
    {"pass": bool, "score": float, "reason": str, "namedScores": dict[str, float]},
    total=False,
)


def make_result(
    passed: bool,
    reason: str,
    *,
    score: float | None = None,
    named_scores: Mapping[str, float] | None = None,
) -> GradingResult:
    """Build a result; ``score`` defaults to 1.0 when passed and 0.0 when failed."""
    result: GradingResult = {
        "pass": bool(passed),
        "score": float(score if score is not None else (1.0 if passed else 0.0)),
        "reason": reason,
    }
    if named_scores:
        result["namedScores"] = {name: float(value) for name, value in named_scores.items()}
    return result


def fail(reason: str, *, named_scores: Mapping[str, float] | None = None) -> GradingResult:
    """A failed result with score 0."""
    return make_result(False, reason, named_scores=named_scores)
