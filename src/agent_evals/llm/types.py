"""The small protocol every chat model implementation follows.

Messages are plain dicts in the OpenAI chat format (``{"role": ..., "content": ...}``,
assistant messages may carry ``tool_calls``, tool results are ``{"role": "tool",
"tool_call_id": ..., "content": ...}``). Tools are OpenAI function-tool dicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Message = dict[str, Any]
ToolSpec = dict[str, Any]
Role = Literal["agent", "user", "judge"]


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    calls: int = 0
    cost: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            calls=self.calls + other.calls,
            cost=round(self.cost + other.cost, 8),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "calls": self.calls,
            "cost": self.cost,
        }


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call as the model asked for it; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ChatResponse:
    content: str | None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = None

    def as_message(self) -> Message:
        """The assistant message to append to the history."""
        message: Message = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


class LLMError(RuntimeError):
    """The model could not be reached or gave no usable answer (after retries)."""


class LLMConfigError(LLMError):
    """The LLM settings are missing or inconsistent; the message names what to set."""


@runtime_checkable
class ChatModel(Protocol):
    """One chat model (a deployment, a model on a server, or a replay of a recording)."""

    @property
    def model(self) -> str:
        """The model or deployment name, as shown in results."""
        ...

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
    ) -> ChatResponse:
        """Answer the conversation; raises LLMError when no answer could be had."""
        ...
