"""The budget ledger: every call checks it before it is sent and adds its cost after, across
processes; once the limit is reached no request leaves (kind ``budget``), and a model without a
price cannot be metered (kind ``config``)."""

from __future__ import annotations

import asyncio
import multiprocessing
from pathlib import Path

import pytest

from agent_evals.llm import Endpoint, LLMConfigError, OpenAIChatModel, PriceTable, Usage
from agent_evals.llm.budget import BudgetLedger, BudgetSpent, ledgers_from_env, stop_if_spent
from agent_evals.llm.pricing import ModelPrice
from agent_evals.llm.settings import load_settings
from agent_evals.testing.scripted_openai import Reply, ScriptedOpenAIServer

HELLO = [{"role": "user", "content": "hello"}]
PRICES = PriceTable({"priced": ModelPrice(1_000_000.0, 0.0)})  # $1 per prompt token: costs are easy to read


def test_a_ledger_counts_by_role_and_refuses_once_the_limit_is_reached(tmp_path: Path) -> None:
    ledger = BudgetLedger.create(tmp_path / "budget.json", 1.0)
    ledger.check("agent", "m")
    ledger.add("agent", Usage(10, 2, 12, 1, 0.6))
    ledger.add("judge", Usage(5, 1, 6, 1, 0.5))
    with pytest.raises(BudgetSpent) as caught:
        ledger.check("user", "user-model")
    assert caught.value.kind == "budget"
    assert str(caught.value) == (
        "the run's budget of $1.00 is spent ($1.1000 by 2 model call(s)): the user model user-model was not "
        "called (--budget-usd, budget.json)"
    )
    state = ledger.read()
    assert (state.spent_usd, state.calls, state.refused, state.largest_call_usd) == (1.1, 2, 1, 0.6)
    assert state.by_role["agent"] == {"calls": 1, "prompt_tokens": 10, "completion_tokens": 2, "cost": 0.6}
    assert state.spent_at is not None


def test_a_conversation_not_started_stops_at_once(tmp_path: Path) -> None:
    ledger = BudgetLedger.create(tmp_path / "b.json", 0.5)
    env = {"LLM_BUDGET_LEDGER": str(ledger.path)}
    stop_if_spent(env)  # nothing spent yet
    ledger.add("agent", Usage(1, 1, 2, 1, 0.5))
    with pytest.raises(BudgetSpent, match=r"this conversation was not started"):
        stop_if_spent(env)
    assert ledger.read().refused == 0  # no call was refused: none was about to be sent


def test_a_budget_is_above_zero() -> None:
    with pytest.raises(ValueError, match="above 0"):
        BudgetLedger.create(Path("/nonexistent/b.json"), 0)


def _spend(path: str, cost: float, out: multiprocessing.Queue) -> None:  # in a child process
    ledger, calls = BudgetLedger(Path(path)), 0
    try:
        while True:
            ledger.check("agent", "m")
            ledger.add("agent", Usage(1, 0, 1, 1, cost))
            calls += 1
    except BudgetSpent:
        out.put(calls)


def test_workers_in_other_processes_share_one_ledger_and_lose_no_update(tmp_path: Path) -> None:
    ledger = BudgetLedger.create(tmp_path / "budget.json", 2.0)
    queue: multiprocessing.Queue = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=_spend, args=(str(ledger.path), 0.01, queue)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    calls = sum(queue.get(timeout=5) for _ in workers)
    state = ledger.read()
    assert state.calls == calls  # every add kept: no lost update between processes
    assert state.spent_usd == pytest.approx(0.01 * calls)
    assert 2.0 <= state.spent_usd <= 2.0 + 4 * 0.01 + 1e-9  # past the limit by at most one call per worker
    assert state.refused == 4


def _model(server: ScriptedOpenAIServer, name: str, ledger: BudgetLedger) -> OpenAIChatModel:
    return OpenAIChatModel(Endpoint.compatible(server.base_url), name, prices=PRICES, role="user", budget=(ledger,))


def _call(model: OpenAIChatModel) -> None:
    async def call() -> None:
        async with model:
            await model.complete(HELLO)

    asyncio.run(call())


def test_a_model_call_is_checked_before_it_is_sent_and_costed_after(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.responder = lambda request: Reply.text("hi", usage=(3, 1))
    ledger = BudgetLedger.create(tmp_path / "budget.json", 5.0)
    model = _model(server, "priced", ledger)
    _call(model)
    _call(model)
    assert ledger.read().spent_usd == 6.0 and ledger.read().by_role["user"]["calls"] == 2
    with pytest.raises(BudgetSpent):
        _call(model)
    assert server.request_count == 2  # the third request never left


def test_a_model_without_a_price_cannot_be_metered(server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    ledger = BudgetLedger.create(tmp_path / "budget.json", 5.0)
    with pytest.raises(LLMConfigError, match=r"the user model mystery-model has no known price.*LLM_PRICES"):
        _call(_model(server, "mystery-model", ledger))
    assert server.request_count == 0


def test_the_ledgers_come_from_the_environment(tmp_path: Path) -> None:
    first, second = BudgetLedger.create(tmp_path / "a.json", 1), BudgetLedger.create(tmp_path / "b.json", 2)
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "LLM_BUDGET_LEDGER": f"{first.path}:{second.path}"}
    assert [ledger.path for ledger in load_settings(env).budget] == [first.path, second.path]
    assert ledgers_from_env({}) == ()
    with pytest.raises(LLMConfigError, match=r"LLM_BUDGET_LEDGER names .*missing.json, which is not a file"):
        load_settings({**env, "LLM_BUDGET_LEDGER": str(tmp_path / "missing.json")})
