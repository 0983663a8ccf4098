"""The store in SQL, the same for SQLite and PostgreSQL: one table, indexed for selection by window
and agent (the index holds every column sampling reads, so selecting reads no record).

A backend gives :meth:`SqlStore._run`: run one statement (``?`` placeholders) with a connection
it holds, inside one transaction, and return the rows; it turns a lost database into
:class:`~agent_evals.live.store.StoreUnavailable`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from agent_evals.live.store import Candidate, ConversationStore, StoreSettings, StoreUnavailable
from agent_evals.live.stored import Feedback, StoredConversation
from agent_evals.record import AgentInfo, RecordError, RunRecord, Turn

SCHEMA_VERSION = 1
SCHEMA = (
    """CREATE TABLE IF NOT EXISTS conversations (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        agent_info TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        status TEXT NOT NULL,
        instance TEXT NOT NULL,
        turns INTEGER NOT NULL,
        tool_calls INTEGER NOT NULL,
        tool_errors INTEGER NOT NULL,
        rating TEXT,
        comment TEXT,
        rated_at DOUBLE PRECISION,
        record TEXT NOT NULL,
        history TEXT NOT NULL,
        turn_log TEXT NOT NULL,
        pending TEXT
    )""",
    # selection by window and agent reads only this index (every column of a Candidate is in it)
    """CREATE INDEX IF NOT EXISTS conversations_window ON conversations
        (agent, created_at, id, updated_at, status, turns, tool_calls, tool_errors, rating)""",
    """CREATE INDEX IF NOT EXISTS conversations_created ON conversations
        (created_at, agent, id, updated_at, status, turns, tool_calls, tool_errors, rating)""",
    "CREATE INDEX IF NOT EXISTS conversations_user ON conversations (user_id)",
    "CREATE INDEX IF NOT EXISTS conversations_updated ON conversations (updated_at)",
    "CREATE INDEX IF NOT EXISTS conversations_answering ON conversations (instance) WHERE status = 'answering'",
    "CREATE TABLE IF NOT EXISTS live_schema (version INTEGER NOT NULL)",
)
_COLUMNS = (
    "id", "user_id", "agent", "agent_info", "created_at", "updated_at", "status", "instance",
    "turns", "tool_calls", "tool_errors", "record", "history", "turn_log", "pending",
)
_SAVE = (
    f"INSERT INTO conversations ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)}) "
    "ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS if c not in ("id", "user_id", "created_at"))
)
_SELECT = f"SELECT {', '.join(_COLUMNS)}, rating, comment, rated_at FROM conversations"
_CANDIDATE = "id, agent, created_at, updated_at, status, turns, tool_calls, tool_errors, rating"
_FETCH_CHUNK = 500


class SqlStore(ConversationStore):
    def __init__(self, settings: StoreSettings) -> None:
        super().__init__(settings)
        self._ready = False

    @abstractmethod
    def _run(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[tuple[Any, ...]]:
        """Run the statements in one transaction; the rows of the last one."""

    def _one(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self._ensure_schema()
        return self._run([(sql, params)])

    def _ensure_schema(self) -> None:
        if self._ready:
            return
        self._run([(statement, ()) for statement in SCHEMA])
        version = self._run([("SELECT version FROM live_schema", ())])
        if not version:
            self._run([("INSERT INTO live_schema (version) VALUES (?)", (SCHEMA_VERSION,))])
        elif version[0][0] > SCHEMA_VERSION:
            raise StoreUnavailable(
                f"the conversation store {self.settings.shown_url} has schema version {version[0][0]}; "
                f"this kit reads version {SCHEMA_VERSION}: upgrade agent-evals"
            )
        self._ready = True
        if self.settings.instance:
            self.mark_cut_off(self.settings.instance)
        self.housekeeping()

    # -- writing -------------------------------------------------------------------------
    def save(self, conversation: StoredConversation) -> None:
        c = conversation
        record = c.record
        pending = record.pending.user if record.pending is not None and c.status == "answering" else None
        if pending is not None:  # the message being answered is in `pending`; the record is the last answered one
            record = replace(record, pending=None, end=None)
        self._one(_SAVE, (
            c.id, c.user_id, c.agent.name, json.dumps(c.agent.to_dict()), c.created_at, c.updated_at, c.status,
            c.instance, c.turns, c.tool_calls, c.tool_errors, json.dumps(record.to_metadata(), ensure_ascii=False),
            json.dumps(c.history, ensure_ascii=False), json.dumps(c.turn_log), pending,
        ))

    def mark_answering(self, conversation: StoredConversation, stored: bool, if_updated_at: float | None = None) -> bool:
        c = conversation
        if not stored or c.record.pending is None:
            self.save(c)
            return True
        sql = ("UPDATE conversations SET status = 'answering', pending = ?, updated_at = ?, instance = ?, turn_log = ?, "
               "agent_info = ? WHERE id = ?")
        params: list[Any] = [c.record.pending.user, c.updated_at, c.instance, json.dumps(c.turn_log),
                             json.dumps(c.agent.to_dict()), c.id]
        if if_updated_at is not None:
            sql += " AND updated_at = ?"
            params.append(if_updated_at)
        return bool(self._one(sql + " RETURNING id", params))

    def rate(self, conversation_id: str, feedback: Feedback) -> bool:
        rows = self._one(
            "UPDATE conversations SET rating = ?, comment = ?, rated_at = ? WHERE id = ? RETURNING id",
            (feedback.rating, feedback.comment, feedback.at, conversation_id),
        )
        return bool(rows)

    def delete_user(self, user_id: str) -> int:
        return len(self._one("DELETE FROM conversations WHERE user_id = ? RETURNING id", (user_id,)))

    def purge(self, before: float) -> int:
        return len(self._one("DELETE FROM conversations WHERE updated_at < ? RETURNING id", (before,)))

    def mark_cut_off(self, instance: str) -> int:
        rows = self._one(
            "UPDATE conversations SET status = 'cut_off' WHERE status = 'answering' AND instance = ? RETURNING id",
            (instance,),
        )
        return len(rows)

    # -- reading -------------------------------------------------------------------------
    def get(self, conversation_id: str) -> StoredConversation | None:
        rows = self._one(f"{_SELECT} WHERE id = ?", (conversation_id,))
        return _conversation(rows[0]) if rows else None

    def candidates(self, since: float, until: float, agents: Sequence[str] = ()) -> list[Candidate]:
        if agents:
            found: list[Candidate] = []
            for agent in dict.fromkeys(agents):  # one index range per agent
                rows = self._one(
                    f"SELECT {_CANDIDATE} FROM conversations WHERE agent = ? AND created_at >= ? AND created_at < ?",
                    (agent, since, until),
                )
                found += [Candidate(*row) for row in rows]
            return sorted(found, key=lambda c: (c.created_at, c.id))
        rows = self._one(
            f"SELECT {_CANDIDATE} FROM conversations WHERE created_at >= ? AND created_at < ? ORDER BY created_at, id",
            (since, until),
        )
        return [Candidate(*row) for row in rows]

    def fetch(self, ids: Sequence[str]) -> list[StoredConversation]:
        found: dict[str, StoredConversation] = {}
        for start in range(0, len(ids), _FETCH_CHUNK):
            chunk = list(ids[start : start + _FETCH_CHUNK])
            rows = self._one(f"{_SELECT} WHERE id IN ({', '.join('?' for _ in chunk)})", chunk)
            found.update((row[0], _conversation(row)) for row in rows)
        return [found[i] for i in ids if i in found]


def _conversation(row: Sequence[Any]) -> StoredConversation:
    values = dict(zip((*_COLUMNS, "rating", "comment", "rated_at"), row, strict=True))
    try:
        record = RunRecord.from_metadata(json.loads(values["record"]))
    except (ValueError, RecordError) as exc:  # a row written by hand or by another version
        raise StoreUnavailable(f"conversation {values['id']} in the store is unreadable: {exc}") from None
    if values["pending"] is not None and values["status"] in ("answering", "cut_off"):
        record.pending, record.end = Turn(values["pending"]), None  # the message being (or last) answered
    feedback = (
        Feedback(values["rating"], values["comment"], float(values["rated_at"] or 0.0)) if values["rating"] else None
    )
    return StoredConversation(
        id=values["id"],
        user_id=values["user_id"],
        agent=AgentInfo.from_dict(json.loads(values["agent_info"])),
        created_at=float(values["created_at"]),
        updated_at=float(values["updated_at"]),
        record=record,
        history=json.loads(values["history"]),
        turn_log=json.loads(values["turn_log"]),
        status=values["status"],
        instance=values["instance"],
        feedback=feedback,
    )
