"""One synthetic eval with known repeats, its figures worked out by hand in the tests.

case  group    priority  runs (in order)                          passed failed errors
C01   copy     smoke     pass, fail(ts), pass, fail(diff /as/0)   2      2      0      flaky
C02   copy     full      pass ×4                                  4      0      0
C03   blocked  smoke     fail(diff /as/0) ×3, error(model)        0      3      1
C04   new      smoke     error(system) ×2, pass ×2                2      0      2
"""

from __future__ import annotations

from typing import Any

from agent_evals.testing.promptfoo_results import result_row

SEQUENCE = (
    "tool_sequence in_order: expected get_spoke → validate_spoke_config; actual get_spoke; "
    "missing validate_spoke_config after get_spoke (position 2)"
)
DIFF = (
    "input_diff: 0 of 1 expected change(s) made, 0 unexpected change(s) (submitted: create_spoke_pull_request "
    "call 3, turn 2, the only call with a configuration; source: spoke 'crm-dev-neu' from the portal)\n"
    'wrong values:\n  /addressSpace/0: expected "10.1.0.0/22", got "10.9.0.0/22"'
)


def scenario_rows(provider: str = "spoke", offset: int = 0) -> list[dict[str, Any]]:
    plan: list[tuple[str, str, str, str, dict[str, Any]]] = [
        ("C01", "copy", "smoke", "pass", {}),
        ("C01", "copy", "smoke", "fail", {"failing": [("tool_sequence", SEQUENCE)]}),
        ("C01", "copy", "smoke", "pass", {}),
        ("C01", "copy", "smoke", "fail", {"failing": [("input_diff", DIFF)], "end": "max_turns", "turns": 6}),
        *[("C02", "copy", "full", "pass", {}) for _ in range(4)],
        *[("C03", "blocked", "smoke", "fail", {"failing": [("input_diff", DIFF)]}) for _ in range(3)],
        ("C03", "blocked", "smoke", "error", {"error_kind": "model", "error": "the model is unreachable"}),
        ("C04", "new", "smoke", "error", {"error_kind": "system", "error": "the portal is not reachable"}),
        ("C04", "new", "smoke", "error", {"error_kind": "system", "error": "the portal is not reachable"}),
        ("C04", "new", "smoke", "pass", {}),
        ("C04", "new", "smoke", "pass", {}),
    ]
    return [
        result_row(case, offset + index, outcome, group=group, priority=priority, provider=provider, **extra)
        for index, (case, group, priority, outcome, extra) in enumerate(plan)
    ]
