"""The conversation store in PostgreSQL (``AGENT_EVALS_LIVE_DATABASE_URL=postgresql://…``).

Needs psycopg 3 (the ``postgres`` extra). One connection, used under a lock and opened again
after the server was lost; a server that cannot be reached is :class:`StoreUnavailable`
naming the URL without its password. ``?`` placeholders become psycopg's ``%s``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from agent_evals.live.store import StoreSettings, StoreUnavailable
from agent_evals.live.store_sql import SqlStore

CONNECT_TIMEOUT_S = 5
_PLACEHOLDER = re.compile(r"\?")


class PostgresStore(SqlStore):
    backend = "postgresql"

    def __init__(self, settings: StoreSettings) -> None:
        super().__init__(settings)
        try:
            import psycopg
        except ImportError:
            raise StoreUnavailable(
                "the conversation store is PostgreSQL, but psycopg is not installed: pip install 'agent-evals[postgres]'"
            ) from None
        self._psycopg = psycopg
        self._lock = threading.Lock()
        self._connection: Any = None

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
                with connection.transaction():
                    for sql, params in statements:
                        cursor = connection.execute(_PLACEHOLDER.sub("%s", sql), tuple(params))
                        rows = cursor.fetchall() if cursor.description is not None else []
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                self._drop()
                raise StoreUnavailable(self._unreachable(exc)) from None
            except psycopg.Error as exc:
                raise StoreUnavailable(f"the conversation store {self.settings.shown_url} failed: {_line(exc)}") from None
            return rows

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
