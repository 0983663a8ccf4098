"""A fake agent for driver and replay tests: replies from a list, no model, no portal."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Self

from agent_evals.agent.types import AgentReply, ToolObserver
from agent_evals.llm.types import Message
from agent_evals.record import AgentInfo, ToolCall, ToolOutcome, Usage


def tool_call(tool: str, result: Any = None, *, outcome: ToolOutcome = "ok", **arguments: Any) -> ToolCall:
    """An executed call (as the agent loop returns it)."""
    return ToolCall.request(f"call-{tool}", tool, json.dumps(arguments)).with_outcome(outcome, result, 1.0)


class FakeAgent:
    """Answers each ``respond`` with the next reply (reporting its calls as they happen, like the
    production loop); an exception in the list is raised after the calls before it were reported."""

    def __init__(self, replies: Sequence[AgentReply | BaseException | tuple[ToolCall, BaseException]]) -> None:
        self.replies = list(replies)
        self.histories: list[list[Message]] = []

    @property
    def info(self) -> AgentInfo:
        return AgentInfo(name="fake", model="fake-model", instructions_sha256="0" * 64)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def respond(self, history: Sequence[Message], *, on_tool_call: ToolObserver | None = None) -> AgentReply:
        self.histories.append(list(history))
        reply = self.replies.pop(0)
        if isinstance(reply, tuple):  # a call made, then a failure
            call, failure = reply
            if on_tool_call is not None:
                on_tool_call(call)
            raise failure
        if isinstance(reply, BaseException):
            raise reply
        for call in reply.tool_calls:
            if on_tool_call is not None:
                on_tool_call(call)
        return reply


class QuietAgent(FakeAgent):
    """An agent whose ``respond`` takes no observer (a team's own agent): its calls come with the reply."""

    async def respond(self, history: Sequence[Message]) -> AgentReply:  # type: ignore[override]
        return await super().respond(history)


def reply(text: str, *calls: ToolCall, tokens: int = 10, stop_reason: str = "reply") -> AgentReply:
    return AgentReply(text=text, tool_calls=calls, usage=Usage(tokens, 1, tokens + 1, 1, 0.001),
                      stop_reason=stop_reason)  # type: ignore[arg-type]
