"""The production tool-calling loop.

One ``respond(history)``: call the chat model with the allowed tools, execute each
tool call the model asks for, feed the results back, and repeat until the model
answers with text or ``max_tool_rounds`` model replies with tool calls were
executed. The portal's chat endpoint and the Promptfoo providers both run this.

Errors the model should see come back to it as tool results, and each call's
outcome is typed (:data:`~agent_evals.record.ToolOutcome`): ``invalid_arguments``
(not a JSON object; not called), ``refused`` (a tool the agent may not use or that
does not exist, or one past the tool-round limit; not called), ``tool_error`` (the
tool failed, raised, or its MCP server answered an error), ``ok``. Each call that reached a
server names it (``ToolCall.server``, from the executor's :class:`ToolResult`). An MCP server
that cannot be reached or stopped and a model that cannot be reached raise
(``ServerUnavailable``, ``LLMError``: any ``KitError``): the turn cannot go on; the calls made
before are already reported through ``on_tool_call``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_evals.agent.types import AgentReply, StopReason, ToolObserver, ToolResult
from agent_evals.llm.types import ChatModel, Message, ToolSpec
from agent_evals.record import KitError, ToolCall, ToolOutcome, Usage, parse_arguments

log = logging.getLogger(__name__)

MAX_ROUNDS_REPLY = (
    "I stopped before finishing: I reached my limit of {n} rounds of tool calls for one message. "
    "Nothing more was done; please tell me how to continue."
)


class ToolExecutor(Protocol):
    """Executes tools for the loop (``McpTools`` in production: the agent's MCP servers)."""

    @property
    def specs(self) -> list[ToolSpec]: ...

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Run one tool. Raise a ``KitError`` (``ServerUnavailable``) when the tools cannot be reached at
        all; any other exception is reported to the model as a tool error."""
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
    on_tool_call: ToolObserver | None = None,
) -> AgentReply:
    """Run the loop for one user turn; ``history`` ends with the user's message.

    ``on_tool_call`` sees every call as soon as its outcome is known, so a turn that
    raises half-way (portal or model gone) has already reported what it did.
    """
    turn = _Turn(messages=[{"role": "system", "content": system_prompt}, *history], observer=on_tool_call)
    return await _loop(turn, model, tools, temperature, max_tool_rounds)


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
            stop: StopReason = "max_tokens" if response.finish_reason == "length" else "reply"
            return turn.reply(response.content or "", stop)
        turn.add(response.as_message())
        if rounds >= max_tool_rounds:
            log.warning("agent stopped at max_tool_rounds=%d", max_tool_rounds)
            note = f"not executed: the agent reached its limit of {max_tool_rounds} tool rounds"
            for request in response.tool_calls:
                turn.add_call(request.with_outcome("refused", note), error_text(note))
            return turn.reply(MAX_ROUNDS_REPLY.format(n=max_tool_rounds), "max_tool_rounds")
        rounds += 1
        for request in response.tool_calls:
            turn.add_call(*await _execute(request, tools, allowed))


@dataclass
class _Turn:
    """What one turn has built so far: the request messages, the new ones, calls and usage."""

    messages: list[Message]
    observer: ToolObserver | None = None
    new_messages: list[Message] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    def add(self, message: Message) -> None:
        self.messages.append(message)
        self.new_messages.append(message)

    def add_call(self, call: ToolCall, content: str) -> None:
        self.calls.append(call)
        self.add({"role": "tool", "tool_call_id": call.id, "content": content})
        if self.observer is not None:
            self.observer(call)

    def reply(self, text: str, stop_reason: StopReason) -> AgentReply:
        self.new_messages.append({"role": "assistant", "content": text})
        return AgentReply(
            text=text,
            tool_calls=tuple(self.calls),
            usage=self.usage,
            stop_reason=stop_reason,
            messages=tuple(self.new_messages),
        )


async def _execute(request: ToolCall, tools: ToolExecutor, allowed: set[str]) -> tuple[ToolCall, str]:
    """Execute one requested call; returns the call with its outcome and the text for the model."""
    if request.name not in allowed:
        known = ", ".join(sorted(allowed)) or "none"
        message = f"{request.name!r} is not one of your tools, so it was not called; your tools are: {known}"
        return request.with_outcome("refused", message), error_text(message)
    arguments, problem = parse_arguments(request.raw_arguments)
    if problem is not None or arguments is None:
        message = f"the arguments for {request.name} are not a JSON object ({problem}); the tool was not called"
        return request.with_outcome("invalid_arguments", message), error_text(message)
    started = time.perf_counter()
    try:
        result = await tools.call(request.name, arguments)
    except KitError:  # a server is gone, the replay diverged, the budget is spent: the turn cannot go on
        raise
    except Exception as exc:  # the model sees it as a tool error; logged with its traceback
        log.warning("tool %s raised %s", request.name, type(exc).__name__, exc_info=True)
        result = ToolResult(value=None, text=f"the tool failed: {type(exc).__name__}: {exc}", is_error=True)
    duration_ms = (time.perf_counter() - started) * 1000
    log.debug("tool %s: %s in %.1f ms", request.name, "error" if result.is_error else "ok", duration_ms)
    outcome: ToolOutcome = "tool_error" if result.is_error else "ok"
    if result.is_error:
        text = error_text(result.text)
        value = result.value if result.value is not None else text
        return request.with_outcome(outcome, value, duration_ms, server=result.server), text
    return request.with_outcome(outcome, result.value, duration_ms, server=result.server), result.text
