"""The conversation store in PostgreSQL (``AGENT_EVALS_LIVE_DATABASE_URL=postgresql://…``).

Needs psycopg 3 (the ``postgres`` extra). One connection, used under a lock and opened again
after the server was lost; a server that cannot be reached is :class:`StoreUnavailable`
naming the URL without its password. ``?`` placeholders become psycopg's ``%s``.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from typing import Any

from agent_evals.live.store import StoreSettings, StoreUnavailable
from agent_evals.live.store_sql import SqlStore

log = logging.getLogger(__name__)
CONNECT_TIMEOUT_S = 5
_PLACEHOLDER = re.compile(r"\?")


class PostgresStore(SqlStore):
    backend = "postgresql"

    def __init__(self, settings: StoreSettings) -> None:
        super().__init__(settings)
        try:
            import psycopg  # lazy: loads psycopg only when used (start-up time)
        except ImportError:
            raise StoreUnavailable(
                "the conversation store is PostgreSQL, but psycopg is not installed: pip install 'agent-evals[postgres]'"
            ) from None
        self._psycopg = psycopg
        self._lock = threading.Lock()
        self._connection: Any = None

    def _ensure_schema(self) -> None:
        fresh = not self._ready
        super()._ensure_schema()
        if fresh:
            self._fast_compression()

    def _fast_compression(self) -> None:
        """lz4 for the large columns when the server has it (PostgreSQL's default, pglz, costs a
        millisecond or more per conversation read or written)."""
        found = self._run([("SELECT attname FROM pg_attribute WHERE attrelid = 'conversations'::regclass "
                            "AND attname IN ('record', 'history') AND attcompression <> 'l'", ())])
        for (column,) in found:
            try:
                self._run([(f"ALTER TABLE conversations ALTER COLUMN {column} SET COMPRESSION lz4", ())])
            except StoreUnavailable:
                log.info("the conversation store's server has no lz4 compression; the default is kept")
                return

    def _connect(self) -> Any:
        if self._connection is None or self._connection.closed:
            try:
                self._connection = self._psycopg.connect(
                    self.settings.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
                )
            except self._psycopg.Error as exc:
                raise StoreUnavailable(self._unreachable(exc)) from None
        return self._connection

    def _run(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[tuple[Any, ...]]:
        psycopg = self._psycopg
        with self._lock:
            connection = self._connect()
            rows: list[tuple[Any, ...]] = []
            try:
                if len(statements) == 1:  # one statement commits by itself: no BEGIN/COMMIT round trips
                    rows = self._execute(connection, *statements[0])
                else:
                    with connection.transaction():
                        for sql, params in statements:
                            rows = self._execute(connection, sql, params)
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                self._drop()
                raise StoreUnavailable(self._unreachable(exc)) from None
            except psycopg.Error as exc:
                raise StoreUnavailable(f"the conversation store {self.settings.shown_url} failed: {_line(exc)}") from None
            return rows

    @staticmethod
    def _execute(connection: Any, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        cursor = connection.execute(_PLACEHOLDER.sub("%s", sql), tuple(params))
        return cursor.fetchall() if cursor.description is not None else []

    def _unreachable(self, exc: BaseException) -> str:
        return f"the conversation store {self.settings.shown_url} is not reachable: {_line(exc)}"

    def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.close()
            except self._psycopg.Error:
                pass  # it is gone already

    def close(self) -> None:
        with self._lock:
            self._drop()


def _line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return re.sub(r"password=\S+", "password=***", text) or type(exc).__name__
