"""The small protocol every chat model implementation follows.

Messages are plain dicts in the OpenAI chat format (``{"role": ..., "content": ...}``,
assistant messages may carry ``tool_calls``, tool results are ``{"role": "tool",
"tool_call_id": ..., "content": ...}``). Tools are OpenAI function-tool dicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agent_evals.record import ErrorKind, KitError, Role, ToolCall, Usage

Message = dict[str, Any]
ToolSpec = dict[str, Any]

__all__ = ["ChatModel", "ChatResponse", "LLMConfigError", "LLMError", "Message", "Role", "ToolCall", "ToolSpec", "Usage"]


@dataclass(frozen=True)
class ChatResponse:
    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()  # requests: ``outcome`` is None
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = None

    def as_message(self) -> Message:
        """The assistant message to append to the history."""
        # Content is always a string: some OpenAI-compatible servers (llama.cpp) reject null.
        message: Message = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw_arguments}}
                for c in self.tool_calls
            ]
        return message


class LLMError(KitError, RuntimeError):
    """The model could not be reached or gave no usable answer (after retries): kind ``model``."""

    kind: ErrorKind = "model"


class LLMConfigError(LLMError):
    """The LLM settings are missing or inconsistent; the message names what to set: kind ``config``."""

    kind = "config"


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
        max_tokens: int | None = None,
    ) -> ChatResponse:
        """Answer the conversation; raises LLMError when no answer could be had."""
        ...
