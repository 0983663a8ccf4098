"""``LLM_MAX_IN_FLIGHT``: at most N requests in flight per endpoint, across every process.

Promptfoo's ``-j 16`` starts 16 Python workers, each with its own conversation; without a cap
they all call the model at once and a provider's rate limit answers with a storm of 429s.
:class:`InFlightLimit` is a semaphore shared through the file system: N lock files per endpoint
(``<LLM_IN_FLIGHT_DIR>/<hash of the endpoint URL>/slot-<i>.lock``, default folder
``$XDG_RUNTIME_DIR/agent-evals-in-flight``, else ``~/.cache/agent-evals/in-flight``: one per user,
shared by every run and shard, never in a run's own temporary directory); a request holds one slot (``fcntl.flock``, non-blocking)
while it is sent and answered, and waits, polling, while all N are held. The kernel releases
a slot when its process dies, so a killed worker never keeps one. The retries' waits are spent
outside a slot (:mod:`agent_evals.llm.retry` honours ``Retry-After``).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
import fcntl

MAX_IN_FLIGHT_ENV = "LLM_MAX_IN_FLIGHT"
DIR_ENV = "LLM_IN_FLIGHT_DIR"
LIMIT = 1000
POLL_S = (0.005, 0.05)  # the first wait, the longest


class InFlightLimit:
    def __init__(self, limit: int, key: str, folder: Path | None = None) -> None:
        if not 1 <= limit <= LIMIT:
            raise ValueError(f"{MAX_IN_FLIGHT_ENV} must be from 1 to {LIMIT}, got {limit}")
        self.limit = limit
        root = Path(folder) if folder is not None else default_folder()
        self.folder = root / hashlib.sha256(key.encode()).hexdigest()[:16]

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[int]:
        """Hold one slot for the duration of the block (waits while every slot is held)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        wait = POLL_S[0]
        while True:
            held = self._try_all()
            if held is not None:
                number, fd = held
                try:
                    yield number
                finally:
                    _release(fd)
                return
            await asyncio.sleep(wait * (0.5 + random.random()))
            wait = min(POLL_S[1], wait * 2)

    def _try_all(self) -> tuple[int, int] | None:
        start = random.randrange(self.limit)
        for offset in range(self.limit):
            number = (start + offset) % self.limit
            fd = os.open(self.folder / f"slot-{number}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return number, fd
        return None


def _release(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def default_folder() -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        return Path(runtime) / "agent-evals-in-flight"
    return Path.home() / ".cache" / "agent-evals" / "in-flight"


def in_flight_from_env(env: Mapping[str, str], key: str, problems: list[str]) -> InFlightLimit | None:
    """The limit ``LLM_MAX_IN_FLIGHT`` sets for the endpoint ``key`` (None: no limit); a bad value
    is added to ``problems``."""
    raw = (env.get(MAX_IN_FLIGHT_ENV) or "").strip()
    if not raw:
        return None
    if not raw.isdigit() or not 1 <= int(raw) <= LIMIT:
        problems.append(f"{MAX_IN_FLIGHT_ENV} must be a whole number from 1 to {LIMIT}, got {raw!r}")
        return None
    folder = (env.get(DIR_ENV) or "").strip()
    return InFlightLimit(int(raw), key, Path(folder) if folder else None)
