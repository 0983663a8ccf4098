"""The portal's conversation store, opened on first use from the app's data dir and the environment.

The chat router and the conversations router share one :class:`StoreHolder`. Opening late
keeps a portal that serves evaluations from touching a database it never needs, and lets a
portal start while its PostgreSQL is down (each request then answers 503 until it is back).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from agent_evals.live.store import ConversationStore, StoreSettings
from agent_evals.live.store_postgres import PostgresStore
from agent_evals.live.store_sqlite import SqliteStore


def open_store(settings: StoreSettings) -> ConversationStore:
    """The store the settings name, opened (its schema created); raises ``StoreUnavailable``."""
    if settings.backend == "postgresql":
        return PostgresStore(settings)
    return SqliteStore(settings)


class StoreHolder:
    def __init__(self, store: ConversationStore | None = None, settings: StoreSettings | None = None) -> None:
        self._store = store
        self._settings = settings
        self._lock = threading.Lock()

    def get(self, app_state: Any) -> ConversationStore:
        """The store (raises ``StoreUnavailable`` / ``StoreConfigError``)."""
        if self._store is None:
            with self._lock:
                if self._store is None:
                    settings = self._settings or StoreSettings.from_env(Path(app_state.config.data_dir))
                    self._store = open_store(settings)
        return self._store

    @property
    def instance(self) -> str:
        return self._store.settings.instance if self._store is not None else ""

    def close(self) -> None:
        store, self._store = self._store, None
        if store is not None:
            store.close()
