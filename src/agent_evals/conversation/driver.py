"""Drive one conversation between a user simulator and an agent.

The record is filled as the conversation goes, so when something fails half-way
(the portal went away, the model could not be reached) everything done so far —
in particular the pull requests created — is still in the result.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_evals.agent.types import AgentReply, ConversationalAgent, ToolCall
from agent_evals.contract import ConversationEnd
from agent_evals.conversation.users import BaseUserSimulator, Turn
from agent_evals.llm.types import Message, Usage

log = logging.getLogger(__name__)

DEFAULT_MAX_TURNS = 15
MAX_TURNS_LIMIT = 100
PR_CREATING_TOOLS = frozenset({"create_spoke_pull_request"})
_PR_URL = re.compile(r"/pullrequest/(\d+)\b")

# Called after every turn is recorded (replay uses it to check the run still fits its cassette).
TurnObserver = Callable[["ConversationRecord"], None]
# Called with (turn number, message) before the agent sees a user message (replay checks it first,
# so a changed message stops the run before the agent's recorded tool calls run against it).
MessageObserver = Callable[[int, str], None]


@dataclass
class ConversationRecord:
    """Everything that happened, in order; filled while the conversation runs."""

    turns: list[Turn] = field(default_factory=list)
    tool_calls: list[tuple[int, ToolCall]] = field(default_factory=list)  # (turn, call)
    pull_requests: list[dict[str, Any]] = field(default_factory=list)
    agent_usage: Usage = field(default_factory=Usage)
    end: ConversationEnd | None = None
    error: str | None = None
    pending_user_message: str | None = None  # sent, but the agent never answered

    @property
    def final_reply(self) -> str:
        return self.turns[-1].assistant if self.turns else ""

    @property
    def user_messages_sent(self) -> int:
        return len(self.turns) + (1 if self.pending_user_message is not None else 0)


def pull_request_from(call: ToolCall) -> dict[str, Any] | None:
    """The ``{id, url}`` of a PR a successful PR-creating tool call made, else None."""
    if call.is_error or call.name not in PR_CREATING_TOOLS or not isinstance(call.result, dict):
        return None
    pr_id, url = call.result.get("id"), call.result.get("url")
    if isinstance(url, str) and (isinstance(pr_id, int) or _PR_URL.search(url)):
        if not isinstance(pr_id, int):
            pr_id = int(_PR_URL.search(url).group(1))  # type: ignore[union-attr]
        return {"id": pr_id, "url": url}
    return None


async def run_conversation(
    agent: ConversationalAgent,
    user: BaseUserSimulator,
    *,
    max_turns: int = DEFAULT_MAX_TURNS,
    record: ConversationRecord | None = None,
    on_turn: TurnObserver | None = None,
    on_user_message: MessageObserver | None = None,
) -> ConversationRecord:
    """Alternate user and agent until the user stops or ``max_turns`` messages were sent.

    Exceptions propagate after being noted in ``record`` (``end = "error"``);
    pass your own ``record`` to keep the partial result.
    """
    if not 1 <= max_turns <= MAX_TURNS_LIMIT:
        raise ValueError(f"max_turns must be between 1 and {MAX_TURNS_LIMIT}, got {max_turns}")
    record = record if record is not None else ConversationRecord()
    history: list[Message] = []
    try:
        while True:
            move = await user.next(record.turns)
            if move.end is not None:
                record.end = move.end
                return record
            if len(record.turns) >= max_turns:
                record.end = "max_turns"
                return record
            assert move.text is not None
            number = len(record.turns) + 1
            record.pending_user_message = move.text
            if on_user_message is not None:
                on_user_message(number, move.text)
            history.append({"role": "user", "content": move.text})
            try:
                reply = await agent.respond(history)
            except Exception as exc:
                _note_partial_turn(record, number, exc)
                raise
            _note_reply(record, number, reply)
            record.turns.append(Turn(user=move.text, assistant=reply.text, tool_calls=reply.tool_calls))
            record.pending_user_message = None
            history.extend(reply.messages or ({"role": "assistant", "content": reply.text},))
            if on_turn is not None:
                on_turn(record)
    except BaseException as exc:
        record.end = "error"
        record.error = record.error or describe_error(exc)
        raise


def _note_partial_turn(record: ConversationRecord, turn: int, exc: BaseException) -> None:
    """Keep the tool calls (and tokens) of a turn that failed half-way, when the agent tells them."""
    calls = getattr(exc, "partial_tool_calls", ())
    usage = getattr(exc, "partial_usage", None)
    _note_reply(record, turn, AgentReply(text="", tool_calls=tuple(calls), usage=usage or Usage()))


def _note_reply(record: ConversationRecord, turn: int, reply: AgentReply) -> None:
    record.agent_usage = record.agent_usage + reply.usage
    for call in reply.tool_calls:
        record.tool_calls.append((turn, call))
        pr = pull_request_from(call)
        if pr is not None and all(p["id"] != pr["id"] for p in record.pull_requests):
            record.pull_requests.append(pr)


def describe_error(exc: BaseException) -> str:
    """One line naming what failed, unwrapping exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return text if type(exc).__name__ in text else f"{type(exc).__name__}: {text}"
