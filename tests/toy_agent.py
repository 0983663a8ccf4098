"""A toy agent for the core's tests (a team's own factory, apart from the toy pack it talks to): it opens
a ticket when asked, and repeats the user's message."""

from __future__ import annotations

import json
from typing import Any

from agent_evals.agent.types import AgentReply
from agent_evals.record import AgentInfo, ToolCall, Usage
from tests.toy_pack import TICKET_TOOL


class EchoAgent:
    def __init__(self, name: str | None, **_: Any) -> None:
        self.info = AgentInfo(name=name or "echo", model="none")

    async def __aenter__(self) -> EchoAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def respond(self, history: Any, *, on_tool_call: Any = None) -> Any:
        said = str(history[-1]["content"])
        calls = []
        if "ticket" in said:
            ticket = {"id": 12, "url": "https://desk.example/tickets/12"}
            calls.append(ToolCall.request("t1", TICKET_TOOL, json.dumps({"title": said})).with_outcome("ok", ticket, 1.0))
            for call in calls:
                if on_tool_call is not None:
                    on_tool_call(call)
        return AgentReply(text=f"You said: {said}", tool_calls=tuple(calls), usage=Usage())


def create_agent(name: str | None = None, **kwargs: Any) -> EchoAgent:
    return EchoAgent(name, **kwargs)
