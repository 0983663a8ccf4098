"""What an agent turn produces, and the small interface every agent offers.

A team with its own agent can point the providers at its own factory (a dotted
path, see ``agent_evals.agent.factory``): the factory returns an object that
follows :class:`ConversationalAgent`. Tool calls are the run record's
:class:`~agent_evals.record.ToolCall`, with a typed outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

from agent_evals.llm.types import Message
from agent_evals.record import AgentInfo, StopReason, ToolCall, Usage

__all__ = ["AgentInfo", "AgentReply", "ConversationalAgent", "StopReason", "ToolCall", "ToolObserver", "ToolResult"]

ToolObserver = Callable[[ToolCall], None]
"""Called with each tool call as soon as the loop has its outcome (so a turn that breaks off
half-way loses none of the calls it made, e.g. a PR it created)."""


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer: ``value`` is parsed JSON when possible; ``text`` goes to the model;
    ``server`` names the MCP server that answered (the run record's ``ToolCall.server``)."""

    value: Any
    text: str
    is_error: bool
    server: str | None = None


@dataclass(frozen=True)
class AgentReply:
    """The outcome of one ``respond``: the text for the user and everything done on the way."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "reply"
    # The messages to append to the history (assistant tool-call messages, tool
    # results, and the final assistant message), in the chat format.
    messages: tuple[Message, ...] = ()


@runtime_checkable
class ConversationalAgent(Protocol):
    """An agent the providers can drive.

    ``respond`` gets the conversation so far (user and assistant messages, plus
    any tool messages from earlier turns this agent returned in
    ``AgentReply.messages``) and returns the next reply. It calls ``on_tool_call``
    (when given) with every tool call as it completes.
    """

    @property
    def info(self) -> AgentInfo: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def respond(
        self, history: Sequence[Message], *, on_tool_call: ToolObserver | None = None
    ) -> AgentReply: ...
