"""Pull request records in SQLite (one connection, guarded by a lock; WAL journal).

The store only keeps records; the git side (branches, merges) lives in
``pullrequests.py``, which calls the store while holding the portal's git lock.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_evals.packs.spoke.portal.models import Issue, PullRequestStatus, ValidationStatus

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pull_requests (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    spoke_name TEXT NOT NULL,
    file TEXT NOT NULL,
    source_branch TEXT NOT NULL UNIQUE,
    target_branch TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'abandoned', 'completed')),
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    eval_id TEXT,
    test_id TEXT,
    validation_status TEXT NOT NULL CHECK (validation_status IN ('succeeded', 'failed')),
    validation_errors TEXT NOT NULL,
    source_spoke TEXT,
    base_commit TEXT NOT NULL,
    head_commit TEXT NOT NULL,
    merge_commit TEXT,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS pull_requests_eval ON pull_requests (eval_id);
CREATE TABLE IF NOT EXISTS fixture_spokes (
    name TEXT NOT NULL,
    eval_id TEXT,
    test_id TEXT,
    created_at TEXT NOT NULL,
    removed_at TEXT
);
"""
_COLUMNS = (
    "id",
    "title",
    "description",
    "spoke_name",
    "file",
    "source_branch",
    "target_branch",
    "status",
    "created_at",
    "created_by",
    "eval_id",
    "test_id",
    "validation_status",
    "validation_errors",
    "source_spoke",
    "base_commit",
    "head_commit",
    "merge_commit",
    "updated_at",
)


@dataclass(frozen=True)
class PullRequestRecord:
    id: int
    title: str
    description: str
    spoke_name: str
    file: str
    source_branch: str
    target_branch: str
    status: PullRequestStatus
    created_at: str
    created_by: str
    eval_id: str | None
    test_id: str | None
    validation_status: ValidationStatus
    validation_errors: tuple[Issue, ...]
    source_spoke: str | None
    base_commit: str
    head_commit: str
    merge_commit: str | None
    updated_at: str


class PullRequestStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    @staticmethod
    def problem(path: Path) -> str | None:
        """Why the database at ``path`` is unusable, or ``None``."""
        if not Path(path).is_file():
            return f"missing PR database {Path(path).name}"
        try:
            db = sqlite3.connect(path)
            try:
                check = db.execute("PRAGMA quick_check").fetchone()[0]
                db.execute("SELECT count(*) FROM pull_requests").fetchone()
            finally:
                db.close()
        except sqlite3.DatabaseError as exc:
            return f"broken PR database: {exc}"
        return None if check == "ok" else f"broken PR database: {check}"

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def next_id(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT coalesce(max(id), 0) + 1 FROM pull_requests").fetchone()[0])

    def insert(self, record: PullRequestRecord) -> None:
        values = _to_row(record)
        marks = ", ".join("?" for _ in _COLUMNS)
        with self._lock:
            self._db.execute(
                f"INSERT INTO pull_requests ({', '.join(_COLUMNS)}) VALUES ({marks})",
                [values[c] for c in _COLUMNS],
            )

    def set_status(
        self, pr_id: int, status: PullRequestStatus, updated_at: str, merge_commit: str | None = None
    ) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE pull_requests SET status = ?, updated_at = ?, "
                "merge_commit = coalesce(?, merge_commit) WHERE id = ?",
                (status, updated_at, merge_commit, pr_id),
            )

    def get(self, pr_id: int) -> PullRequestRecord | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM pull_requests WHERE id = ?", (pr_id,)).fetchone()
        return None if row is None else _from_row(row)

    def list(
        self, *, status: str | None = None, eval_id: str | None = None, test_id: str | None = None
    ) -> list[PullRequestRecord]:
        """Matching records, newest first."""
        where, args = [], []
        for column, value in (("status", status), ("eval_id", eval_id), ("test_id", test_id)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        sql = "SELECT * FROM pull_requests" + (f" WHERE {' AND '.join(where)}" if where else "")
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY id DESC", args).fetchall()
        return [_from_row(row) for row in rows]


    # --- fixture spokes: spokes a test case put on main for its conversation ---------------------

    def add_fixture_spoke(self, name: str, eval_id: str | None, test_id: str | None, created_at: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO fixture_spokes (name, eval_id, test_id, created_at) VALUES (?, ?, ?, ?)",
                (name, eval_id, test_id, created_at),
            )

    def fixture_spokes(self, *, eval_id: str | None = None, test_id: str | None = None) -> builtins.list[str]:  # `list` is a method here
        """Names of the fixture spokes still on main, oldest first, filtered by eval and test id."""
        where, args = ["removed_at IS NULL"], []
        for column, value in (("eval_id", eval_id), ("test_id", test_id)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        with self._lock:
            rows = self._db.execute(
                f"SELECT name FROM fixture_spokes WHERE {' AND '.join(where)} ORDER BY rowid", args
            ).fetchall()
        return [row["name"] for row in rows]

    def remove_fixture_spoke(self, name: str, removed_at: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE fixture_spokes SET removed_at = ? WHERE name = ? AND removed_at IS NULL", (removed_at, name)
            )


def _to_row(record: PullRequestRecord) -> dict[str, Any]:
    row = {c: getattr(record, c) for c in _COLUMNS}
    row["validation_errors"] = json.dumps([i.model_dump() for i in record.validation_errors])
    return row


def _from_row(row: sqlite3.Row) -> PullRequestRecord:
    values = {c: row[c] for c in _COLUMNS}
    values["validation_errors"] = tuple(Issue(**i) for i in json.loads(row["validation_errors"]))
    return PullRequestRecord(**values)
