"""Drive one conversation between a user simulator and an agent, filling the run record.

The record is filled as the conversation goes: every tool call is in it as soon as the
agent's loop has its outcome, so when something fails half-way (the portal went away,
the model could not be reached) everything done so far — the pull requests created in
particular — is still there. Exceptions propagate; the caller ends the record with the
error's kind (``agent_evals.provider.run``).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable

from agent_evals.agent.types import AgentReply, ConversationalAgent, ToolObserver
from agent_evals.conversation.users import BaseUserSimulator
from agent_evals.llm.types import Message
from agent_evals.record import End, RunRecord, SideEffect, ToolCall, Turn

log = logging.getLogger(__name__)

DEFAULT_MAX_TURNS = 15
MAX_TURNS_LIMIT = 100

# Called after every turn is recorded (replay uses it to check the run still fits its cassette).
TurnObserver = Callable[[RunRecord], None]
# Called with (turn number, message) before the agent sees a user message (replay checks it first,
# so a changed message stops the run before the agent's recorded tool calls run against it).
MessageObserver = Callable[[int, str], None]
# Which side effect a tool call made, if any (the system's pack knows its tools: ``System.side_effect``).
SideEffectFinder = Callable[[ToolCall], SideEffect | None]


def no_side_effects(call: ToolCall) -> SideEffect | None:
    return None


async def run_conversation(
    agent: ConversationalAgent,
    user: BaseUserSimulator,
    *,
    record: RunRecord,
    max_turns: int = DEFAULT_MAX_TURNS,
    find_side_effect: SideEffectFinder = no_side_effects,
    on_turn: TurnObserver | None = None,
    on_user_message: MessageObserver | None = None,
    on_tool_call: ToolObserver | None = None,
) -> RunRecord:
    """Alternate user and agent until the user stops, ``max_turns`` messages were sent, or a
    limit stopped the agent (its tool rounds, or its reply cut off at the completion cap);
    the end is set in ``record``."""
    if not 1 <= max_turns <= MAX_TURNS_LIMIT:
        raise ValueError(f"max_turns must be between 1 and {MAX_TURNS_LIMIT}, got {max_turns}")
    history: list[Message] = []
    while True:
        move = await user.next(record.turns)
        if move.end is not None:
            record.finish(End(move.end))
            return record
        if len(record.turns) >= max_turns:
            record.finish(End("max_turns"))
            return record
        assert move.text is not None
        number = len(record.turns) + 1
        record.pending = Turn(user=move.text)
        if on_user_message is not None:
            on_user_message(number, move.text)
        history.append({"role": "user", "content": move.text})
        reply = await _respond(agent, history, _Collector(record, number, find_side_effect, on_tool_call))
        turn = Turn(move.text, reply.text, record.pending.tool_calls, reply.stop_reason)
        record.turns.append(turn)
        record.pending = None
        history.extend(reply.messages or ({"role": "assistant", "content": reply.text},))
        if on_turn is not None:
            on_turn(record)
        if reply.stop_reason in ("max_tool_rounds", "max_tokens"):  # a limit stopped the agent mid-task
            record.finish(End(reply.stop_reason))
            return record


class _Collector:
    """Puts each tool call of the turn into the record as it completes."""

    def __init__(
        self, record: RunRecord, turn: int, find_side_effect: SideEffectFinder, observer: ToolObserver | None
    ) -> None:
        self.record, self.turn, self.find, self.observer = record, turn, find_side_effect, observer
        self.seen = 0

    def __call__(self, call: ToolCall) -> None:
        pending = self.record.pending
        assert pending is not None
        placed = self.record.place([call], self.turn)[0]
        self.record.pending = Turn(pending.user, tool_calls=(*pending.tool_calls, placed))
        self.seen += 1
        effect = self.find(placed)
        if effect is not None:
            self.record.add_side_effect(effect)
        if self.observer is not None:
            self.observer(placed)


async def _respond(agent: ConversationalAgent, history: list[Message], collect: _Collector) -> AgentReply:
    """Ask the agent; an agent that does not report calls as they happen gives them with its reply."""
    if _takes_observer(agent):
        reply = await agent.respond(history, on_tool_call=collect)
    else:
        reply = await agent.respond(history)
    if collect.seen == 0:
        for call in reply.tool_calls:
            collect(call)
    return reply


def _takes_observer(agent: ConversationalAgent) -> bool:
    return _respond_takes_observer(type(agent))


@functools.cache
def _respond_takes_observer(agent_type: type) -> bool:
    try:
        parameters = inspect.signature(agent_type.respond).parameters  # type: ignore[attr-defined]  # any agent class; no respond is caught
    except (AttributeError, TypeError, ValueError):
        return False
    return "on_tool_call" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def describe_error(exc: BaseException) -> str:
    """One line naming what failed, unwrapping exception groups."""
    exc = unwrap(exc)
    text = str(exc) or type(exc).__name__
    return text if type(exc).__name__ in text or getattr(exc, "kind", None) else f"{type(exc).__name__}: {text}"


def unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


__all__ = [
    "DEFAULT_MAX_TURNS",
    "MAX_TURNS_LIMIT",
    "MessageObserver",
    "SideEffectFinder",
    "ToolObserver",
    "TurnObserver",
    "describe_error",
    "no_side_effects",
    "run_conversation",
    "unwrap",
]
