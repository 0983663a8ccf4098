"""A regression the report names is never silent in the gate (pure).

The baseline comparison names every case that passed every graded run in the baseline and
now fails or is flaky. The gate's regression rules cover the priorities they list
(``no_regressions``, ``no_significant_regression``; ``[all]`` covers every case). A regression
outside all of them is named in a warning line, with its priority, so that "gate holds" never
hides a case the report calls a regression.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_evals.report.compare import Comparison
from agent_evals.report.gate_file import ALL
from agent_evals.report.gate_rule import Rule, listed

NO_PRIORITY = "(none)"


def uncovered_regressions(comparison: Comparison | None, scopes: Iterable[tuple[str, ...]]) -> Rule | None:
    """A warning naming the regressions no rule's priorities cover, or None."""
    if comparison is None:
        return None
    covered = {priority for scope in scopes for priority in scope}
    if ALL in covered:
        return None
    outside = [c for c in comparison.of("regression") if c.priority not in covered]
    if not outside:
        return None
    named = [f"{c.id} {c.before}→{c.after} (priority {c.priority or NO_PRIORITY})" for c in outside]
    priorities = sorted({c.priority or NO_PRIORITY for c in outside})
    return Rule(
        "uncovered regressions", "warning",
        f"{len(outside)} regression(s) against the baseline that no rule covers: {listed(named)}; "
        f"to gate them, add {', '.join(priorities)} (or all) to no_regressions",
    )
