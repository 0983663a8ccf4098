"""What an agent turn produces, and the small interface every agent offers.

A team with its own agent can point the providers at its own factory (a dotted
path, see ``agent_evals.agent.factory``): the factory returns an object that
follows :class:`ConversationalAgent`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, Protocol, Self, runtime_checkable

from agent_evals.contract import AgentInfo
from agent_evals.llm.types import Message, Usage

StopReason = Literal["reply", "max_tool_rounds"]
"""``reply``: the model answered with text; ``max_tool_rounds``: the loop stopped it."""


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer: ``value`` is parsed JSON when possible; ``text`` goes to the model."""

    value: Any
    text: str
    is_error: bool


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model asked for, and what came of it."""

    id: str
    name: str
    arguments: dict[str, Any] | None  # None when the raw arguments were not a JSON object
    raw_arguments: str
    result: Any  # parsed JSON when the tool answered JSON, else text (the error message for errors)
    is_error: bool
    duration_ms: float  # the tool's own time, as the loop measured it; 0 when it was not called


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
    ``AgentReply.messages``) and returns the next reply.
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

    async def respond(self, history: Sequence[Message]) -> AgentReply: ...
