"""``agent-evals run … --budget-usd X`` and a suite's ``budget_usd``: the run's spend limits.

``--budget-usd`` caps the whole run (every suite, agent + simulated user + judge together) with
one ledger, ``data/runs/<run id>/budget.json``; a suite whose provider config sets
``budget_usd`` also has a ledger of its own, ``budget-<suite>.json``. Each suite's Promptfoo
workers get the ledgers that apply to it in ``LLM_BUDGET_LEDGER``, and every model call checks
them (:mod:`agent_evals.llm.budget`). A replay spends nothing: its budgets are not set up.
When the run ends, each ledger's state is kept in the run manifest (``budget``, and each
suite's ``budget``), where the report reads it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_evals.llm.budget import LEDGER_ENV, BudgetLedger
from agent_evals.record import KitError
from agent_evals.suites.discovery import Suite
from agent_evals.suites.files import load_suite

RUN_LEDGER = "budget.json"


class BudgetSetupError(KitError, ValueError):
    """A budget that cannot be set up (kind ``config``)."""

    kind = "config"


def parse_budget(text: str | None) -> float | None:
    """``--budget-usd``'s value in USD, or None; 0, negative or not a number raises one line."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise BudgetSetupError(f"--budget-usd {text}: a budget is a number of US dollars above 0 (e.g. 5 or 0.50)")
    return value


def suite_budget(suite: Suite) -> float | None:
    """The suite's ``budget_usd`` (its providers must agree on one)."""
    values = {value for p in load_suite(suite).providers if (value := p.config.get("budget_usd")) is not None}
    if not values:
        return None
    if len(values) > 1 or not all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in values):
        shown = ", ".join(sorted(map(str, values)))
        raise BudgetSetupError(
            f"suite {suite.name}: its providers give budget_usd {shown}; a suite has one budget, a number above 0"
        )
    return float(values.pop())


@dataclass
class RunBudgets:
    """The ledgers of one run, made as the suites start."""

    folder: Path
    run_limit: float | None
    suite_limits: Mapping[str, float]
    ledgers: dict[str, BudgetLedger] = field(default_factory=dict)  # "run" or the suite's name

    @property
    def any(self) -> bool:
        return self.run_limit is not None or bool(self.suite_limits)

    def for_suite(self, suite: str) -> list[BudgetLedger]:
        """The ledgers a suite's workers check (made on first use)."""
        out = []
        if self.run_limit is not None:
            out.append(self._ledger("run", self.folder / RUN_LEDGER, self.run_limit))
        if suite in self.suite_limits:
            out.append(self._ledger(suite, self.folder / f"budget-{suite}.json", self.suite_limits[suite]))
        return out

    def env(self, suite: str) -> dict[str, str]:
        paths = [str(ledger.path) for ledger in self.for_suite(suite)]
        return {LEDGER_ENV: os.pathsep.join(paths)} if paths else {}

    def state(self, key: str) -> dict[str, Any] | None:
        ledger = self.ledgers.get(key)
        return {**ledger.read().as_dict(), "ledger": str(ledger.path)} if ledger is not None else None

    def _ledger(self, key: str, path: Path, limit: float) -> BudgetLedger:
        if key not in self.ledgers:
            self.ledgers[key] = BudgetLedger.create(path, limit)
        return self.ledgers[key]


def run_budgets(folder: Path, run_limit: float | None, suites: list[Suite]) -> RunBudgets:
    """The run's budgets: ``--budget-usd`` and each suite's ``budget_usd`` (raises BudgetSetupError)."""
    limits = {}
    for suite in suites:
        try:
            value = suite_budget(suite)
        except KitError as exc:
            if isinstance(exc, BudgetSetupError):
                raise
            continue  # the preflight names a suite file that cannot be read
        if value is not None:
            limits[suite.name] = value
    return RunBudgets(folder, run_limit, limits)
