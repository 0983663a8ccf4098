"""Where production conversations are kept: one interface, two backends.

* **SQLite** (the default): ``conversations.sqlite3`` in the portal's data dir, created with
  owner-only permissions.
* **PostgreSQL**: when ``AGENT_EVALS_LIVE_DATABASE_URL`` is a ``postgresql://`` URL (needs the
  ``postgres`` extra: ``pip install 'agent-evals[postgres]'``). A ``sqlite:///path`` URL picks
  another SQLite file.

Settings (environment): ``AGENT_EVALS_LIVE_DATABASE_URL``; ``AGENT_EVALS_LIVE_RETENTION_DAYS``
(default 90; ``0`` keeps everything): conversations not written to for longer are deleted
when the store opens and once a day after; ``AGENT_EVALS_LIVE_INSTANCE`` (default: the host
name and the data dir): the server's name in the store, so a restarted server marks the
conversations it was answering when it stopped as cut off.

Every operation raises :class:`StoreUnavailable` (kind ``system``) when the database cannot
be reached; nothing already stored is changed by a failed operation. A database URL is
never logged or shown with its password.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_evals.live.stored import Feedback, StoredConversation
from agent_evals.record import KitError

log = logging.getLogger(__name__)

URL_ENV = "AGENT_EVALS_LIVE_DATABASE_URL"
RETENTION_ENV = "AGENT_EVALS_LIVE_RETENTION_DAYS"
INSTANCE_ENV = "AGENT_EVALS_LIVE_INSTANCE"
SQLITE_FILE = "conversations.sqlite3"
DEFAULT_RETENTION_DAYS = 90.0
PURGE_EVERY_S = 86_400.0


class StoreUnavailable(KitError):
    """The conversation store cannot be reached or refused an operation (kind ``system``)."""

    kind = "system"


class StoreConfigError(KitError, ValueError):
    """The store's settings are wrong (kind ``config``)."""

    kind = "config"


@dataclass(frozen=True)
class Candidate:
    """What sampling needs of a conversation, read without its record."""

    id: str
    agent: str
    created_at: float
    updated_at: float
    status: str
    turns: int
    tool_calls: int
    tool_errors: int
    rating: str | None


@dataclass(frozen=True)
class StoreSettings:
    url: str  # sqlite:///<path> or postgresql://…
    retention_days: float = DEFAULT_RETENTION_DAYS
    instance: str = ""

    @property
    def backend(self) -> str:
        return "postgresql" if self.url.startswith(("postgresql://", "postgres://")) else "sqlite"

    @property
    def shown_url(self) -> str:
        """The URL without a password."""
        return masked(self.url)

    @classmethod
    def from_env(cls, data_dir: Path) -> StoreSettings:
        url = os.environ.get(URL_ENV, "").strip() or f"sqlite:///{Path(data_dir).resolve() / SQLITE_FILE}"
        if not url.startswith(("sqlite:///", "postgresql://", "postgres://")):
            raise StoreConfigError(
                f"{URL_ENV} is {masked(url)!r}: it must be a postgresql:// URL or sqlite:///<path>"
            )
        raw = os.environ.get(RETENTION_ENV, "").strip()
        try:
            retention = float(raw) if raw else DEFAULT_RETENTION_DAYS
        except ValueError:
            raise StoreConfigError(f"{RETENTION_ENV} is {raw!r}, not a number of days") from None
        if retention < 0:
            raise StoreConfigError(f"{RETENTION_ENV} is {raw}: it must be 0 (keep everything) or more days")
        instance = os.environ.get(INSTANCE_ENV, "").strip() or f"{socket.gethostname()}:{Path(data_dir).resolve()}"
        return cls(url, retention, instance)


def masked(url: str) -> str:
    return re.sub(r"(?<=://)([^/@:]*):[^/@]*@", r"\1:***@", url)


class ConversationStore(ABC):
    """The store's operations (see the module docstring). Implementations are thread-safe."""

    backend: str = ""

    def __init__(self, settings: StoreSettings) -> None:
        self.settings = settings
        self._purged_at = 0.0

    # -- writing -------------------------------------------------------------------------
    @abstractmethod
    def save(self, conversation: StoredConversation) -> None:
        """Create or update ``conversation`` (never its feedback: that is :meth:`rate`'s)."""

    @abstractmethod
    def mark_answering(self, conversation: StoredConversation, stored: bool, if_updated_at: float | None = None) -> bool:
        """Store that ``conversation`` is answering its pending message (a light write when ``stored``:
        the record of what was answered is unchanged). With ``if_updated_at``, only if the stored
        conversation was last written then (a copy kept in memory is still the stored one); whether it
        was written."""

    @abstractmethod
    def rate(self, conversation_id: str, feedback: Feedback) -> bool:
        """Store the user's rating; False when there is no such conversation."""

    @abstractmethod
    def delete_user(self, user_id: str) -> int:
        """Delete every conversation of ``user_id``; how many were deleted."""

    @abstractmethod
    def purge(self, before: float) -> int:
        """Delete the conversations last written before ``before`` (epoch seconds)."""

    @abstractmethod
    def mark_cut_off(self, instance: str) -> int:
        """Mark the conversations ``instance`` was answering as cut off (it has just started)."""

    # -- reading -------------------------------------------------------------------------
    @abstractmethod
    def get(self, conversation_id: str) -> StoredConversation | None: ...

    @abstractmethod
    def candidates(self, since: float, until: float, agents: Sequence[str] = ()) -> list[Candidate]:
        """The conversations started in ``[since, until)`` (of ``agents``, when given), oldest first."""

    @abstractmethod
    def fetch(self, ids: Sequence[str]) -> list[StoredConversation]:
        """The conversations with these ids, in this order (missing ones left out)."""

    @abstractmethod
    def close(self) -> None: ...

    # -- housekeeping --------------------------------------------------------------------
    def housekeeping(self, now: float | None = None) -> None:
        """Apply the retention (at most once a day)."""
        now = time.time() if now is None else now
        if self.settings.retention_days <= 0 or now - self._purged_at < PURGE_EVERY_S:
            return
        self._purged_at = now
        deleted = self.purge(now - self.settings.retention_days * 86_400)
        if deleted:
            log.info("retention: deleted %d conversation(s) older than %g day(s)", deleted, self.settings.retention_days)
