"""One production conversation as the store keeps it: who, which agent, the run record, the history.

A :class:`StoredConversation` holds the same :class:`~agent_evals.record.RunRecord` the
evaluations produce (transcript, typed tool calls with results, pull requests, usage, how it
ended), the chat history the agent continues from (its model replies included, so a
conversation can be promoted to a case with its golden conversation), when each turn started
and ended, the user's rating, and its status:

===========  ================================================================================
status       meaning
===========  ================================================================================
``open``     every message was answered; the user may write again
``answering``  the agent is answering the last message (or was, when the server stopped)
``error``    the last message could not be answered (the model or the portal failed); the
             record ends with that error, the history is as before it
``cut_off``  the server stopped while the agent was answering: an error of kind ``cut_off``
===========  ================================================================================

An ``answering`` conversation whose turn started longer ago than the turn timeout is read as
``cut_off`` too (a server that died for good never marks it). Standard library only.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args
from datetime import UTC, datetime

from agent_evals.record import AgentInfo, End, RunRecord, UserInfo, one_of
from agent_evals.record import RecordError

Status = Literal["open", "answering", "error", "cut_off"]
STATUSES: tuple[Status, ...] = get_args(Status)
Rating = Literal["up", "down"]
RATINGS: tuple[Rating, ...] = get_args(Rating)
TURN_TIMEOUT_S = 900.0  # an answer still running after this long was cut off


@dataclass(frozen=True)
class Feedback:
    rating: Rating
    comment: str | None = None
    at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"rating": self.rating, "comment": self.comment, "at": iso(self.at)}


@dataclass
class StoredConversation:
    """A production conversation (see the module docstring)."""

    id: str
    user_id: str
    agent: AgentInfo
    created_at: float
    updated_at: float
    record: RunRecord
    history: list[dict[str, Any]] = field(default_factory=list)
    turn_log: list[dict[str, Any]] = field(default_factory=list)  # [{turn, started_at, ended_at, usage}]
    status: Status = "open"
    instance: str = ""  # the server answering (or that last answered) it
    feedback: Feedback | None = None

    @classmethod
    def new(cls, conversation_id: str, user_id: str, agent: AgentInfo, now: float | None = None) -> StoredConversation:
        now = time.time() if now is None else now
        record = RunRecord(case_id=conversation_id, agent=agent, user=UserInfo(kind="human"))
        return cls(conversation_id, user_id, agent, now, now, record)

    # -- derived columns (indexed or shown without reading the record) ------------------
    @property
    def turns(self) -> int:
        return self.record.user_messages_sent

    @property
    def tool_calls(self) -> int:
        return len(self.record.tool_calls)

    @property
    def tool_errors(self) -> int:
        return sum(1 for call in self.record.tool_calls if call.is_error)

    # -- reading ---------------------------------------------------------------------------
    def effective_status(self, now: float | None = None, timeout_s: float = TURN_TIMEOUT_S) -> Status:
        now = time.time() if now is None else now
        if self.status == "answering" and now - self.updated_at > timeout_s:
            return "cut_off"
        return self.status

    def run_record(self, now: float | None = None, timeout_s: float = TURN_TIMEOUT_S) -> RunRecord:
        """The record with its end as of now: a conversation cut off mid-turn ends in an error of
        kind ``cut_off``; one answering right now has no end yet."""
        status = self.effective_status(now, timeout_s)
        record = replace(self.record, turns=list(self.record.turns), usage=dict(self.record.usage))
        if status == "cut_off":
            turn = self.record.user_messages_sent
            record.end = End.failed(
                "cut_off",
                f"the conversation was cut off in turn {turn}: the server stopped while the agent was answering "
                f"(the turn started at {iso(self.updated_at)})",
            )
        elif status == "answering":
            record.end = None
        return record

    def summary(self, now: float | None = None) -> dict[str, Any]:
        """What a list of conversations shows of each, without the record."""
        return {
            "id": self.id,
            "user_id": self.user_id,
            "agent": self.agent.to_dict(),
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "status": self.effective_status(now),
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "tool_errors": self.tool_errors,
            "feedback": self.feedback.to_dict() if self.feedback else None,
        }

    def to_dict(self, now: float | None = None) -> dict[str, Any]:
        """The REST form (and one line of ``agent-evals live``'s JSONL files)."""
        return {
            **self.summary(now),
            "record": self.run_record(now).to_metadata(),
            "history": list(self.history),
            "turn_log": list(self.turn_log),
        }


def iso(epoch: float) -> str:
    """``2026-05-01T12:00:00.123Z``."""
    whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch))
    return f"{whole}.{int(round((epoch % 1) * 1000)) % 1000:03d}Z"


def parse_time(text: Any) -> float:
    """Epoch seconds of an ISO-8601 time (``Z`` or an offset; a date alone is midnight UTC)."""
    value = str(text).strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def feedback_from(raw: Mapping[str, Any] | None) -> Feedback | None:
    if not raw or raw.get("rating") not in RATINGS:
        return None
    at = raw.get("at")
    return Feedback(raw["rating"], raw.get("comment"), parse_time(at) if at else 0.0)


def conversation_from_dict(raw: Mapping[str, Any]) -> StoredConversation:
    """A conversation in its REST form (:meth:`StoredConversation.to_dict`, a line of a JSONL file);
    raises ``RecordError`` (or ``ValueError``) naming what is wrong."""
    if not isinstance(raw.get("id"), str) or not raw["id"]:
        raise RecordError("a conversation needs an 'id'")
    record = RunRecord.from_metadata(raw.get("record"))
    agent = AgentInfo.from_dict(raw.get("agent")) if isinstance(raw.get("agent"), Mapping) else record.agent
    created = parse_time(raw["created_at"]) if raw.get("created_at") else 0.0
    status = one_of(raw.get("status"), STATUSES, "open")
    return StoredConversation(
        id=raw["id"],
        user_id=str(raw.get("user_id") or ""),
        agent=agent,
        created_at=created,
        updated_at=parse_time(raw["updated_at"]) if raw.get("updated_at") else created,
        record=record,
        history=list(raw.get("history") or []),
        turn_log=list(raw.get("turn_log") or []),
        status=status,
        feedback=feedback_from(raw.get("feedback")),
    )
