"""The production tool-calling loop.

One ``respond(history)``: call the chat model with the allowed tools, execute each
tool call the model asks for, feed the results back, and repeat until the model
answers with text or ``max_tool_rounds`` model replies with tool calls were
executed. The portal's chat endpoint and the Promptfoo providers both run this.

Errors the model should see come back to it as tool results and are recorded
with ``is_error``: arguments that are not a JSON object, a tool the agent may not
use or that does not exist (neither is called), a tool that failed or raised, an
error the portal answered. A portal that cannot be reached and a model that cannot
be reached raise (``PortalUnavailable``, ``LLMError``): the turn cannot go on.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_evals.agent.portal_tools import PortalUnavailable
from agent_evals.agent.types import AgentReply, StopReason, ToolCall, ToolResult
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

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Run one tool. Raise ``PortalUnavailable`` when the tools cannot be reached at all;
        any other exception is reported to the model as a tool error."""
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
    """Run the loop for one user turn; ``history`` ends with the user's message.

    An exception that ends the turn carries ``partial_tool_calls`` and ``partial_usage``:
    the calls made (and tokens spent) before it, so the caller loses nothing.
    """
    turn = _Turn(messages=[{"role": "system", "content": system_prompt}, *history])
    try:
        return await _loop(turn, model, tools, temperature, max_tool_rounds)
    except Exception as exc:
        # What was done before the failure (a PR may exist) travels with the exception.
        exc.partial_tool_calls = tuple(turn.calls)  # type: ignore[attr-defined]
        exc.partial_usage = turn.usage  # type: ignore[attr-defined]
        raise


async def _loop(
    turn: _Turn, model: ChatModel, tools: ToolExecutor, temperature: float | None, max_tool_rounds: int
) -> AgentReply:
    specs = tools.specs
    allowed = {s["function"]["name"] for s in specs}
    rounds = 0
    while True:
        response = await model.complete(turn.messages, tools=specs or None, temperature=temperature)
        turn.usage = turn.usage + response.usage
        if not response.tool_calls:
            return turn.reply(response.content or "", "reply")
        turn.add(response.as_message())
        if rounds >= max_tool_rounds:
            log.warning("agent stopped at max_tool_rounds=%d", max_tool_rounds)
            note = f"not executed: the agent reached its limit of {max_tool_rounds} tool rounds"
            for request in response.tool_calls:
                arguments, _ = parse_arguments(request.arguments)
                turn.add_call(_record(request, arguments, note, True, 0.0), error_text(note))
            return turn.reply(MAX_ROUNDS_REPLY.format(n=max_tool_rounds), "max_tool_rounds")
        rounds += 1
        for request in response.tool_calls:
            turn.add_call(*await _execute(request, tools, allowed))


@dataclass
class _Turn:
    """What one turn has built so far: the request messages, the new ones, calls and usage."""

    messages: list[Message]
    new_messages: list[Message] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    def add(self, message: Message) -> None:
        self.messages.append(message)
        self.new_messages.append(message)

    def add_call(self, call: ToolCall, content: str) -> None:
        self.calls.append(call)
        self.add({"role": "tool", "tool_call_id": call.id, "content": content})

    def reply(self, text: str, stop_reason: StopReason) -> AgentReply:
        self.new_messages.append({"role": "assistant", "content": text})
        return AgentReply(
            text=text,
            tool_calls=tuple(self.calls),
            usage=self.usage,
            stop_reason=stop_reason,
            messages=tuple(self.new_messages),
        )


async def _execute(request: ToolCallRequest, tools: ToolExecutor, allowed: set[str]) -> tuple[ToolCall, str]:
    """Execute one requested call; returns the record and the text for the model."""
    arguments, problem = parse_arguments(request.arguments)
    if request.name not in allowed:
        known = ", ".join(sorted(allowed)) or "none"
        message = f"{request.name!r} is not one of your tools, so it was not called; your tools are: {known}"
        return _record(request, arguments, message, True, 0.0), error_text(message)
    if problem is not None or arguments is None:
        message = (
            f"the arguments for {request.name} are not a JSON object ({problem}); the tool was not called"
        )
        return _record(request, None, message, True, 0.0), error_text(message)
    started = time.perf_counter()
    try:
        result = await tools.call(request.name, arguments)
    except PortalUnavailable:
        raise
    except Exception as exc:  # the model sees it as a tool error; logged with its traceback
        log.warning("tool %s raised %s", request.name, type(exc).__name__, exc_info=True)
        result = ToolResult(value=None, text=f"the tool failed: {type(exc).__name__}: {exc}", is_error=True)
    duration_ms = (time.perf_counter() - started) * 1000
    log.debug("tool %s: %s in %.1f ms", request.name, "error" if result.is_error else "ok", duration_ms)
    if result.is_error:
        text = error_text(result.text)
        value = result.value if result.value is not None else text
        return _record(request, arguments, value, True, duration_ms), text
    return _record(request, arguments, result.value, False, duration_ms), result.text


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
