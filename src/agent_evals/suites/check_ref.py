"""One kit check as a test of a suite names it (read by :func:`agent_evals.assertions.registry.kit_checks`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CheckRef:
    """One kit check in a test: its name, config, metric and position among the test's assertions."""

    name: str
    config: Any
    metric: str | None
    position: int
    informative: bool = False  # weight 0 (or added by the provider): reported, never deciding the row
    negated: bool = False  # its not- form: passes when the check fails (never when it was not graded)
