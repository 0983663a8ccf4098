"""One chat turn written into a stored conversation: begun, answered, or failed.

The chat endpoint calls :func:`begin_turn` before the agent runs (the user's message is
stored, the conversation is ``answering``), then :func:`finish_turn` with the agent's reply
or :func:`fail_turn` with what stopped it. Everything stored passes through
:func:`agent_evals.secrets.scrub` first: keys, tokens and bearer strings a user pastes, or a
tool returns, never reach the store (the agent still gets the message as written, in this
turn). Pull requests (or whatever side effect the domain has) are found by the pack, as in
the evaluations.

A failed or cut-off last turn is dropped when the user writes again: the conversation goes on
from the last answered message, as the history the agent is given always did.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from agent_evals.live.stored import StoredConversation
from agent_evals.packs import Pack
from agent_evals.record import AgentInfo, End, ErrorKind, StopReason, ToolCall, Turn, Usage
from agent_evals.secrets import scrub, secret_values


def begin_turn(
    conversation: StoredConversation, message: str, agent: AgentInfo, instance: str, now: float | None = None
) -> None:
    now = time.time() if now is None else now
    record = conversation.record
    if record.pending is not None:  # the last message was never answered (failed or cut off)
        record.pending = None
        record.end = None
        conversation.turn_log = [t for t in conversation.turn_log if t.get("ended_at")]
    record.agent = agent
    conversation.agent = agent
    record.pending = Turn(user=scrub(message, _secrets()))
    conversation.status = "answering"
    conversation.instance = instance
    conversation.updated_at = now
    conversation.turn_log.append({"turn": record.user_messages_sent, "started_at": now})


def finish_turn(
    conversation: StoredConversation,
    *,
    text: str,
    calls: tuple[ToolCall, ...],
    usage: Usage,
    stop_reason: StopReason,
    messages: tuple[dict[str, Any], ...],
    pack: Pack,
    now: float | None = None,
) -> None:
    """The agent answered: the pending message becomes an answered turn; the history grows by it."""
    now = time.time() if now is None else now
    record = conversation.record
    secrets = _secrets()
    assert record.pending is not None, "finish_turn without begin_turn"
    number = record.user_messages_sent
    placed = record.place([_scrubbed(c, secrets) for c in calls], number)
    record.turns.append(Turn(record.pending.user, scrub(text, secrets), placed, stop_reason))
    record.pending = None
    record.add_usage("agent", usage)
    for call in placed:
        if (effect := pack.system.side_effect(call)) is not None:
            record.add_side_effect(effect)
    record.end = End(stop_reason if stop_reason != "reply" else "done")
    user = {"role": "user", "content": record.turns[-1].user}
    conversation.history = [*conversation.history, user, *scrub(list(messages), secrets)]
    conversation.status = "open"
    conversation.updated_at = now
    if conversation.turn_log:
        conversation.turn_log[-1].update(ended_at=now, usage=usage.as_dict())


def fail_turn(
    conversation: StoredConversation,
    kind: ErrorKind,
    error: str,
    calls: tuple[ToolCall, ...] = (),
    now: float | None = None,
) -> None:
    """The turn could not be answered: the record ends in this error; the history is unchanged."""
    now = time.time() if now is None else now
    record = conversation.record
    if record.pending is not None:
        placed = record.place([_scrubbed(c, _secrets()) for c in calls], record.user_messages_sent)
        record.pending = replace(record.pending, tool_calls=placed)
    record.end = End.failed(kind, scrub(error, _secrets()))
    conversation.status = "error"
    conversation.updated_at = now


def _scrubbed(call: ToolCall, secrets: list[str]) -> ToolCall:
    return replace(
        call,
        raw_arguments=scrub(call.raw_arguments, secrets),
        arguments=scrub(call.arguments, secrets) if call.arguments is not None else None,
        result=scrub(call.result, secrets),
    )


def _secrets() -> list[str]:
    return secret_values()
