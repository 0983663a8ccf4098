"""What a run's spend limit did (pure): :func:`budget_summary` and :func:`budget_lines`.

From the run manifests, each budget ledger's end state (``--budget-usd``: the run's; a suite's
``budget_usd``: that suite's): the limit, what was spent, by role (agent, simulated user,
judge), how many calls it refused; from the rows, the cases and runs the budget stopped (error
rows of kind ``budget``). None when no budget was set and none stopped a run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_evals.record import ROLES
from agent_evals.report import figures as f
from agent_evals.report.model import BudgetSummary, EvalInfo, LedgerSummary, RunInfo
from agent_evals.report.rows import Row

MAX_LISTED = 6


def budget_summary(evals: Sequence[EvalInfo], runs: Sequence[RunInfo], rows: Sequence[Row]) -> BudgetSummary | None:
    ledgers: dict[str, LedgerSummary] = {}
    for scope, state in [("run", r.budget) for r in runs] + [(f"suite {e.suite}", e.budget) for e in evals]:
        if isinstance(state, Mapping) and (summary := _ledger(scope, state)) is not None:
            ledgers[str(state.get("ledger") or scope)] = summary  # a run's ledger is in each suite's too: once
    stopped = [row for row in rows if row.outcome == "error" and row.error_kind == "budget"]
    if not ledgers and not stopped:
        return None
    cases = tuple(dict.fromkeys(row.case_id for row in stopped))
    return BudgetSummary(tuple(ledgers.values()), cases, len(stopped))


def _ledger(scope: str, state: Mapping[str, Any]) -> LedgerSummary | None:
    try:
        by_role = state.get("by_role") or {}
        return LedgerSummary(
            scope=scope,
            limit_usd=float(state["limit_usd"]),
            spent_usd=float(state["spent_usd"]),
            calls=int(state["calls"]),
            refused=int(state.get("refused") or 0),
            cost_by_role={role: float((by_role.get(role) or {}).get("cost") or 0.0) for role in ROLES},
        )
    except (KeyError, TypeError, ValueError):
        return None


def budget_lines(budget: BudgetSummary | None) -> list[str]:
    """``budget (run): $4.98 of $5.00 spent (agent $3.10, …; 311 call(s), 12 refused)``, and the
    cases it stopped."""
    if budget is None:
        return []
    lines = []
    for ledger in budget.ledgers:
        roles = ", ".join(f"{f.ROLE_NAMES[role]} {f.money(ledger.cost_by_role.get(role, 0.0))}" for role in ROLES)
        lines.append(
            f"budget ({ledger.scope}): {f.money(ledger.spent_usd)} of {f.money(ledger.limit_usd)} spent "
            f"({roles}; {ledger.calls} call(s), {ledger.refused} refused)"
        )
    if budget.stopped_runs:
        shown = ", ".join(budget.stopped_cases[:MAX_LISTED]) + (", …" if len(budget.stopped_cases) > MAX_LISTED else "")
        lines.append(
            f"stopped by the budget: {len(budget.stopped_cases)} case(s) ({shown}), {budget.stopped_runs} run(s)"
        )
    return lines
