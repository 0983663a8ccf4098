"""The production tool-calling loop.

One ``respond(history)``: call the chat model with the allowed tools, execute each
tool call the model asks for, feed the results back, and repeat until the model
answers with text or ``max_tool_rounds`` model replies with tool calls were
executed. The portal's chat endpoint and the Promptfoo providers both run this.

Errors the model should see come back to it as tool results and are recorded
with ``is_error``: arguments that are not a JSON object, a tool the agent may not
use, a tool that failed. A portal that cannot be reached and a model that cannot
be reached raise (``PortalUnavailable``, ``LLMError``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from agent_evals.agent.types import AgentReply, ToolCall
from agent_evals.llm.types import ChatModel, Message, ToolCallRequest, ToolSpec, Usage

log = logging.getLogger(__name__)

MAX_ROUNDS_REPLY = (
    "I stopped before finishing: I reached my limit of {n} rounds of tool calls for one message. "
    "Nothing more was done; please tell me how to continue."
)


class ToolExecutor(Protocol):
    """Executes tools for the loop (``PortalTools`` in production)."""

    @property
    def specs(self) -> list[ToolSpec]: ...

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Returns an object with ``value``, ``text`` and ``is_error``."""
        ...


def error_text(message: str) -> str:
    """The text a tool error is given to the model as (recognisable by its prefix)."""
    return message if message.startswith("Error") else f"Error: {message}"


async def run_turn(
    *,
    model: ChatModel,
    tools: ToolExecutor,
    system_prompt: str,
    history: Sequence[Message],
    temperature: float | None,
    max_tool_rounds: int,
) -> AgentReply:
    """Run the loop for one user turn; ``history`` ends with the user's message."""
    specs = tools.specs
    allowed = {s["function"]["name"] for s in specs}
    messages: list[Message] = [{"role": "system", "content": system_prompt}, *history]
    new_messages: list[Message] = []
    calls: list[ToolCall] = []
    usage = Usage()
    rounds = 0
    while True:
        response = await model.complete(messages, tools=specs or None, temperature=temperature)
        usage = usage + response.usage
        assistant = response.as_message()
        if not response.tool_calls:
            text = response.content or ""
            new_messages.append({"role": "assistant", "content": text})
            return AgentReply(text=text, tool_calls=tuple(calls), usage=usage, messages=tuple(new_messages))
        messages.append(assistant)
        new_messages.append(assistant)
        if rounds >= max_tool_rounds:
            log.warning("agent stopped at max_tool_rounds=%d", max_tool_rounds)
            for request in response.tool_calls:
                note = f"not executed: the agent reached its limit of {max_tool_rounds} tool rounds"
                call = _record(request, None, note, True, 0.0)
                calls.append(call)
                tool_message = _tool_message(request.id, error_text(note))
                messages.append(tool_message)
                new_messages.append(tool_message)
            text = MAX_ROUNDS_REPLY.format(n=max_tool_rounds)
            new_messages.append({"role": "assistant", "content": text})
            return AgentReply(
                text=text,
                tool_calls=tuple(calls),
                usage=usage,
                stop_reason="max_tool_rounds",
                messages=tuple(new_messages),
            )
        rounds += 1
        for request in response.tool_calls:
            call, content = await _execute(request, tools, allowed)
            calls.append(call)
            tool_message = _tool_message(request.id, content)
            messages.append(tool_message)
            new_messages.append(tool_message)


async def _execute(
    request: ToolCallRequest, tools: ToolExecutor, allowed: set[str]
) -> tuple[ToolCall, str]:
    """Execute one requested call; returns the record and the text for the model."""
    arguments, problem = parse_arguments(request.arguments)
    if request.name not in allowed:
        known = ", ".join(sorted(allowed)) or "none"
        message = f"unknown tool {request.name!r}: this agent may use only: {known}"
        return _record(request, arguments, message, True, 0.0), error_text(message)
    if problem is not None or arguments is None:
        message = f"the arguments for {request.name} are not a JSON object ({problem}); the tool was not called"
        return _record(request, None, message, True, 0.0), error_text(message)
    started = time.perf_counter()
    result = await tools.call(request.name, arguments)
    duration_ms = (time.perf_counter() - started) * 1000
    text = error_text(result.text) if result.is_error else result.text
    return _record(request, arguments, result.value, result.is_error, duration_ms), text


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """The model's raw argument text as a dict, or ``(None, why not)``."""
    if raw is None or not str(raw).strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return None, f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"expected an object, got {type(value).__name__}"
    return value, None


def _record(
    request: ToolCallRequest, arguments: dict[str, Any] | None, result: Any, is_error: bool, ms: float
) -> ToolCall:
    return ToolCall(
        id=request.id,
        name=request.name,
        arguments=arguments,
        raw_arguments=request.arguments,
        result=result,
        is_error=is_error,
        duration_ms=round(ms, 3),
    )


def _tool_message(call_id: str, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}
