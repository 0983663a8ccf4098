"""``LLM_MAX_IN_FLIGHT``: a semaphore of lock files shared by every process calling one endpoint."""

from __future__ import annotations

import asyncio
import multiprocessing
from pathlib import Path

import pytest

from agent_evals.llm import Endpoint, LLMConfigError, OpenAIChatModel
from agent_evals.llm.in_flight import InFlightLimit
from agent_evals.llm.settings import load_settings
from agent_evals.testing.scripted_openai import Reply, ScriptedOpenAIServer


def test_no_more_than_the_limit_hold_a_slot_at_once(tmp_path: Path) -> None:
    limit = InFlightLimit(2, "http://model", tmp_path)
    holding, most = 0, 0

    async def request() -> None:
        nonlocal holding, most
        async with limit.slot():
            holding += 1
            most = max(most, holding)
            await asyncio.sleep(0.02)
            holding -= 1

    async def many() -> None:
        await asyncio.gather(*(request() for _ in range(8)))

    asyncio.run(many())
    assert most == 2


def _calls(base_url: str, folder: str, count: int) -> None:  # in a child process
    limit = InFlightLimit(2, f"compatible {base_url}", Path(folder))
    model = OpenAIChatModel(Endpoint.compatible(base_url), "m", in_flight=limit)

    async def run() -> None:
        async with model:
            for _ in range(count):
                await model.complete([{"role": "user", "content": "hi"}])

    asyncio.run(run())


def test_processes_calling_one_endpoint_share_its_limit(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(lambda request: Reply.text("ok").with_delay(0.05)) as server:
        workers = [
            multiprocessing.Process(target=_calls, args=(server.base_url, str(tmp_path), 3)) for _ in range(5)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
        assert [w.exitcode for w in workers] == [0] * 5
        assert server.request_count == 15
        assert server.max_in_flight == 2  # five processes, never more than two requests at the server


def test_the_limit_comes_from_the_environment_per_endpoint(tmp_path: Path) -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "LLM_MAX_IN_FLIGHT": "3", "LLM_IN_FLIGHT_DIR": str(tmp_path)}
    one = load_settings(env).in_flight
    other = load_settings({**env, "OPENAI_BASE_URL": "http://127.0.0.1:10/v1"}).in_flight
    assert one is not None and other is not None and one.limit == 3
    assert one.folder.parent == tmp_path and one.folder != other.folder
    assert load_settings({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}).in_flight is None
    for bad in ("0", "-1", "two", "1001"):
        with pytest.raises(LLMConfigError, match=rf"LLM_MAX_IN_FLIGHT must be a whole number from 1 to 1000, got '{bad}'"):
            load_settings({**env, "LLM_MAX_IN_FLIGHT": bad})
