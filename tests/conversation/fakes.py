"""A fake agent for driver and replay tests: replies from a list, no model, no portal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from agent_evals.agent.types import AgentReply, ToolCall
from agent_evals.contract import AgentInfo
from agent_evals.llm.types import Message, Usage


def tool_call(tool: str, result: Any = None, *, is_error: bool = False, **arguments: Any) -> ToolCall:
    import json

    return ToolCall(
        id=f"call-{tool}", name=tool, arguments=arguments, raw_arguments=json.dumps(arguments),
        result=result, is_error=is_error, duration_ms=1.0,
    )


class FakeAgent:
    """Answers each ``respond`` with the next reply; an exception in the list is raised."""

    def __init__(self, replies: Sequence[AgentReply | BaseException]) -> None:
        self.replies = list(replies)
        self.histories: list[list[Message]] = []

    @property
    def info(self) -> AgentInfo:
        return {"name": "fake", "model": "fake-model", "temperature": None, "instructions_sha256": "0" * 64}

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def respond(self, history: Sequence[Message]) -> AgentReply:
        self.histories.append(list(history))
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply


def reply(text: str, *calls: ToolCall, tokens: int = 10) -> AgentReply:
    return AgentReply(text=text, tool_calls=calls, usage=Usage(tokens, 1, tokens + 1, 1, 0.001))
