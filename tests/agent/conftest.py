"""Helpers for the agent tests: run a turn of the real agent against the live portal and
the scripted model server (``kit_env`` points both at them)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from agent_evals.agent.factory import create_agent
from agent_evals.agent.types import AgentReply
from agent_evals.testing.scripted_openai import QueueResponder, Reply, ScriptedOpenAIServer

Respond = Callable[..., AgentReply]
Script = Callable[[Sequence[Reply | str]], QueueResponder]

SPOKE_TOOLS = [
    "list_spokes",
    "get_spoke",
    "get_spoke_schema",
    "validate_spoke_config",
    "create_spoke_pull_request",
    "get_pull_request",
    "list_pull_requests",
    "search_docs",
    "get_doc",
]
INTEGRATION_TOOLS = [
    "list_spokes",
    "get_spoke",
    "get_spoke_schema",
    "list_pull_requests",
    "get_pull_request",
    "search_docs",
    "get_doc",
]


@pytest.fixture
def script(scripted_llm: ScriptedOpenAIServer) -> Script:
    """``script([replies...])`` makes the scripted server answer those, in order, and forget old requests."""

    def use(replies: Sequence[Reply | str]) -> QueueResponder:
        responder = QueueResponder(list(replies))
        scripted_llm.responder = responder
        scripted_llm.clear_requests()
        return responder

    return use


@pytest.fixture
def respond(kit_env: dict[str, str]) -> Respond:
    """``respond("spoke", "message" or [messages], **create_agent overrides)`` → one turn's AgentReply."""

    def run(name: str, history: str | Sequence[dict[str, Any]], **overrides: Any) -> AgentReply:
        messages = [{"role": "user", "content": history}] if isinstance(history, str) else list(history)

        async def turn() -> AgentReply:
            async with create_agent(name, **overrides) as agent:
                return await agent.respond(messages)

        return asyncio.run(turn())

    return run
