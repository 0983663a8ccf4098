"""A run's spend limit across processes: the budget ledger, a JSON file every model call checks.

``agent-evals run … --budget-usd 5`` creates ``data/runs/<run id>/budget.json`` and hands its path
to Promptfoo's Python workers in ``LLM_BUDGET_LEDGER`` (several, separated by ``os.pathsep``:
the run's and a suite's ``budget_usd``); the judge, the simulated user and the agent of every
worker share it. Each model call, before its request is sent, takes the file's lock
(``fcntl.flock``), reads what was spent and raises :class:`BudgetSpent` (kind ``budget``)
when the limit is reached; after the answer, it adds the call's cost (from its tokens and
:mod:`agent_evals.llm.pricing`) under the lock. So a run overshoots its limit by at most the
calls already sent when the limit was reached: one per worker. A model without a price cannot
be metered: with a ledger, its call is a ``config`` error (the runner refuses it up front).

Across machines the limit belongs in a gateway in front of the provider (a LiteLLM proxy with
a virtual key and a budget per role, ``docs/scale.md``): a model call the gateway refuses for a
spent budget (:func:`said_budget_exceeded`) is a ``budget`` error too, not a ``model`` one.

The file::

    {"format": "agent-evals/budget@1", "limit_usd": 5.0, "spent_usd": 4.98, "calls": 311,
     "by_role": {"agent": {"calls": 201, "prompt_tokens": …, "completion_tokens": …, "cost": 3.1}, …},
     "largest_call_usd": 0.031, "refused": 12, "spent_at": "2026-…Z" | null}
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any
import fcntl

from agent_evals.llm.types import LLMConfigError, LLMError, Role, Usage

LEDGER_ENV = "LLM_BUDGET_LEDGER"
FORMAT = "agent-evals/budget@1"
# LiteLLM's words: "Budget has been exceeded! Current cost: …", "ExceededTokenBudget: …", type budget_exceeded
_GATEWAY_BUDGET = re.compile(r"budget has been exceeded|exceeded\w*budget|budget_exceeded|max budget limit reached", re.I)


def said_budget_exceeded(text: str) -> bool:
    """Whether a server's answer says a budget (of a gateway's key, team or proxy) is spent."""
    return bool(_GATEWAY_BUDGET.search(text))


class BudgetSpent(LLMError):
    """The run's spend limit is reached: the call was not sent (kind ``budget``)."""

    kind = "budget"


@dataclass(frozen=True)
class LedgerState:
    limit_usd: float
    spent_usd: float
    calls: int
    by_role: Mapping[str, Mapping[str, float]]
    largest_call_usd: float
    refused: int
    spent_at: str | None

    @property
    def spent(self) -> bool:
        return self.spent_usd >= self.limit_usd

    def as_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, **{k: v for k, v in vars(self).items()}}


class BudgetLedger:
    """One ledger file (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @classmethod
    def create(cls, path: Path, limit_usd: float) -> BudgetLedger:
        if not limit_usd > 0:
            raise ValueError(f"a budget must be above 0 USD, got {limit_usd}")
        state = LedgerState(float(limit_usd), 0.0, 0, {}, 0.0, 0, None)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(state.as_dict(), indent=2) + "\n", encoding="utf-8")
        return cls(path)

    def read(self) -> LedgerState:
        with self._locked(write=False) as handle:
            return _state(handle, self.path)

    def check(self, role: Role, model: str) -> None:
        """Raise :class:`BudgetSpent` when the limit is reached (and count the refusal)."""
        with self._locked(write=True) as handle:
            state = _state(handle, self.path)
            if not state.spent:
                return
            _write(handle, {**state.as_dict(), "refused": state.refused + 1})
        raise BudgetSpent(
            f"the run's budget of ${state.limit_usd:.2f} is spent (${state.spent_usd:.4f} by {state.calls} "
            f"model call(s)): the {role} model {model} was not called (--budget-usd, {self.path.name})"
        )

    def add(self, role: Role, usage: Usage) -> None:
        """Add one call's cost and tokens."""
        with self._locked(write=True) as handle:
            state = _state(handle, self.path)
            by_role = {name: dict(values) for name, values in state.by_role.items()}
            mine = by_role.setdefault(role, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0})
            mine["calls"] += usage.calls or 1
            mine["prompt_tokens"] += usage.prompt_tokens
            mine["completion_tokens"] += usage.completion_tokens
            mine["cost"] = round(mine["cost"] + usage.cost, 8)
            spent = round(state.spent_usd + usage.cost, 8)
            at = state.spent_at or (_now() if spent >= state.limit_usd else None)
            _write(handle, {
                **state.as_dict(), "spent_usd": spent, "calls": state.calls + (usage.calls or 1),
                "by_role": by_role, "largest_call_usd": max(state.largest_call_usd, usage.cost), "spent_at": at,
            })

    @contextmanager
    def _locked(self, *, write: bool) -> Iterator[IO[str]]:
        try:
            handle = self.path.open("r+" if write else "r", encoding="utf-8")
        except OSError as exc:
            raise LLMConfigError(f"{LEDGER_ENV}: cannot open the budget ledger {self.path}: {exc.strerror or exc}") from None
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX if write else fcntl.LOCK_SH)
            try:
                yield handle
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def ledgers_from_env(env: Mapping[str, str] | None = None) -> tuple[BudgetLedger, ...]:
    """The ledgers named by ``LLM_BUDGET_LEDGER`` (none when it is unset)."""
    raw = (os.environ if env is None else env).get(LEDGER_ENV, "")
    return tuple(BudgetLedger(Path(part)) for part in raw.split(os.pathsep) if part.strip())


def stop_if_spent(env: Mapping[str, str] | None = None) -> None:
    """Before a conversation starts: raise :class:`BudgetSpent` when a limit is already reached,
    so it ends at once (no fixture made, no model called)."""
    for ledger in ledgers_from_env(env):
        state = ledger.read()
        if state.spent:
            raise BudgetSpent(
                f"the run's budget of ${state.limit_usd:.2f} is spent (${state.spent_usd:.4f} by {state.calls} "
                f"model call(s)): this conversation was not started (--budget-usd, {ledger.path.name})"
            )


def first_spent(ledgers: tuple[BudgetLedger, ...], role: Role, model: str) -> None:
    """Raise :class:`BudgetSpent` when any ledger's limit is reached."""
    for ledger in ledgers:
        ledger.check(role, model)


def _state(handle: IO[str], path: Path) -> LedgerState:
    handle.seek(0)
    try:
        raw = json.loads(handle.read())
        if raw.get("format") != FORMAT:
            raise ValueError(f"format {raw.get('format')!r}")
        return LedgerState(
            float(raw["limit_usd"]), float(raw["spent_usd"]), int(raw["calls"]), dict(raw["by_role"]),
            float(raw["largest_call_usd"]), int(raw["refused"]), raw.get("spent_at"),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise LLMConfigError(f"{LEDGER_ENV}: {path} is not a budget ledger ({exc})") from None


def _write(handle: IO[str], data: Mapping[str, Any]) -> None:
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps(data, indent=2) + "\n")
    handle.flush()


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
