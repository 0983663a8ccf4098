"""The gate's rule on invalid runs (pure): ``max_invalid`` in the gate file.

An invalid run (the simulated user spoiled its conversation) is neither a pass nor a fail: it
is left out of pass^k and of every other rule's counts. This rule says how many there were
after the re-runs (``--rerun-invalid``), and breaks when there are more than ``max_invalid``;
without the key it is not checked, but its line still shows the count.
"""

from __future__ import annotations

from agent_evals.report.gate_rule import Rule, listed
from agent_evals.report.model import Report


def invalid_rule(report: Report, most: int | None) -> Rule:
    """The ``max_invalid`` rule."""
    still = [run for run in report.invalid_runs if run.outcome == "invalid"]
    cases = list(dict.fromkeys(run.case_id for run in still))
    line = f"{len(still)} invalid run(s) left out of the verdict" + (f" ({listed(cases)})" if cases else "")
    if most is None:
        return Rule("max_invalid", "not_checked", line + "; no limit in the gate file (max_invalid)")
    return Rule("max_invalid", "holds" if len(still) <= most else "broken", line + f", at most {most}")
