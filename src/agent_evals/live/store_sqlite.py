"""The conversation store in an SQLite file (the default: ``conversations.sqlite3`` in the data dir).

The file is created readable by its owner only; WAL journal, so reads never wait for a turn
being written. One connection, used under a lock (SQLite answers in microseconds).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_evals.live.store import StoreSettings, StoreUnavailable
from agent_evals.live.store_sql import SqlStore

BUSY_TIMEOUT_MS = 10_000


class SqliteStore(SqlStore):
    backend = "sqlite"

    def __init__(self, settings: StoreSettings) -> None:
        super().__init__(settings)
        self.path = Path(settings.url.removeprefix("sqlite:///"))  # sqlite:////abs/path, sqlite:///relative/path
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))  # owner only, before SQLite makes it
                connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
                connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                connection.execute("PRAGMA journal_mode = WAL")
                connection.execute("PRAGMA synchronous = NORMAL")
            except (OSError, sqlite3.Error) as exc:
                raise StoreUnavailable(f"the conversation store {self.path} cannot be opened: {exc}") from None
            self._connection = connection
        return self._connection

    def _run(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[tuple[Any, ...]]:
        with self._lock:
            connection = self._connect()
            rows: list[tuple[Any, ...]] = []
            try:
                connection.execute("BEGIN")
                for sql, params in statements:
                    rows = connection.execute(sql, tuple(params)).fetchall()
                connection.execute("COMMIT")
            except sqlite3.Error as exc:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise StoreUnavailable(f"the conversation store {self.path} failed: {exc}") from None
            return rows

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
