"""MCP sessions kept for a worker's life: the stdio servers an agent lists with ``lifetime: worker``.

A Promptfoo worker holds one conversation at a time, each in an event loop of its own
(``asyncio.run`` per call: nothing a conversation leaves behind survives it). A kept session must
outlive those loops, so the sessions live on a loop of their own, in a daemon thread started by the
first conversation that needs one (:data:`WORKER_SESSIONS`). A conversation reaches its kept session
through :class:`KeptSession`, which has the interface of an
:class:`~agent_evals.agent.mcp_session.McpSession` and hops to the sessions' loop for each call.

- A session per resolved server (:attr:`StdioServer.identity`): conversations whose server resolves
  the same share its process; one whose server resolves differently (another working copy in its
  ``args``, say) starts its own, and closes the sessions of that server name no conversation uses.
- A session whose server stopped (it died, or broke during a conversation) is started again by the
  next conversation; the conversation during which it stopped still sees
  :class:`~agent_evals.agent.errors.ServerUnavailable`, as with a server of its own.
- The sessions close at the process's exit (``atexit``), or with :meth:`WorkerSessions.close`; a
  worker killed outright closes their stdin, and the servers exit.

Conversations held at once in one process share a server when it resolves the same for both (the
same working directory): a system that gives each conversation of a process its own workspace at
once (``agent-evals live``) gives each its own server. A Promptfoo worker holds one at a time.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import threading
from collections.abc import Coroutine, Mapping
from typing import Any, Self, TypeVar

from agent_evals.agent.mcp_servers import StdioServer
from agent_evals.agent.mcp_session import DEFAULT_TIMEOUT_S, McpSession
from agent_evals.agent.types import ToolResult
from agent_evals.llm.types import ToolSpec

__all__ = ["WORKER_SESSIONS", "KeptSession", "WorkerSessions"]

log = logging.getLogger(__name__)

_CLOSE_TIMEOUT_S = 15.0
T = TypeVar("T")


class WorkerSessions:
    """The process's kept sessions, on an event loop of their own (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._held: dict[tuple[object, ...], McpSession] = {}
        self._users: dict[McpSession, int] = {}  # the conversations using each session now
        self._opening: dict[str, asyncio.Lock] = {}

    # from a conversation's loop -------------------------------------------------------------
    async def acquire(self, server: StdioServer, timeout_s: float = DEFAULT_TIMEOUT_S) -> McpSession:
        """The open session of ``server``, started now if it is not running; :meth:`release` it after use."""
        return await self.run(self._acquire(server, timeout_s))

    async def release(self, session: McpSession) -> None:
        """A conversation is done with ``session`` (which stays open)."""
        await self.run(self._release(session))

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on the sessions' loop (from another loop)."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._running_loop()))

    def close(self) -> None:
        """Close every kept session (their servers stop) and the sessions' loop; safe to call twice."""
        with self._lock:
            loop, thread, ours = self._loop, self._thread, self._pid == os.getpid()
            held = list(self._held.values())
            self._forget()  # a close that fails leaves nothing a later conversation could take for open
            if loop is None or thread is None or not ours:
                return
        try:
            asyncio.run_coroutine_threadsafe(self._close_all(held), loop).result(_CLOSE_TIMEOUT_S)
        except (concurrent.futures.TimeoutError, RuntimeError) as exc:
            log.warning("the kept MCP sessions did not close cleanly: %s", exc)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_CLOSE_TIMEOUT_S)
        if not thread.is_alive():
            loop.close()

    # on the sessions' loop ------------------------------------------------------------------
    async def _acquire(self, server: StdioServer, timeout_s: float) -> McpSession:
        identity = server.identity
        async with self._opening.setdefault(server.name, asyncio.Lock()):
            ended = [key for key, held in self._held.items() if held.server.name == server.name and (
                not held.is_open or (key != identity and not self._users.get(held)))]
            for key in ended:  # a server that stopped, or another configuration no conversation uses
                await self._held.pop(key).aclose()
            session = self._held.get(identity)
            if session is None:
                session = McpSession(server, timeout_s=timeout_s)
                await session.__aenter__()
                self._held[identity] = session
            self._users[session] = self._users.get(session, 0) + 1
            return session

    async def _release(self, session: McpSession) -> None:
        users = self._users.get(session, 0) - 1
        if users > 0:
            self._users[session] = users
        else:
            self._users.pop(session, None)

    async def _close_all(self, held: list[McpSession]) -> None:
        await asyncio.gather(*(session.aclose() for session in held))

    def _forget(self) -> None:
        """No loop, no session: what a new process, or one whose sessions were closed, starts from."""
        self._loop = self._thread = None
        self._held, self._users, self._opening = {}, {}, {}

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._pid != os.getpid():  # a forked child has none of its parent's threads
                self._forget()
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="agent-evals kept MCP sessions", daemon=True)
                thread.start()
                self._loop, self._thread, self._pid = loop, thread, os.getpid()
            return self._loop


WORKER_SESSIONS = WorkerSessions()
atexit.register(WORKER_SESSIONS.close)


class KeptSession:
    """A conversation's handle on a kept session: an :class:`McpSession`'s interface; leaving it keeps
    the session open for the worker's next conversation."""

    def __init__(self, server: StdioServer, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 sessions: WorkerSessions = WORKER_SESSIONS) -> None:
        self.server = server
        self._timeout_s = timeout_s
        self._sessions = sessions
        self._session: McpSession | None = None
        self.specs: list[ToolSpec] = []

    @property
    def name(self) -> str:
        return self.server.name

    @property
    def names(self) -> list[str]:
        return [s["function"]["name"] for s in self.specs]

    async def __aenter__(self) -> Self:
        self._session = await self._sessions.acquire(self.server, self._timeout_s)
        self.specs = list(self._session.specs)
        return self

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await self._sessions.release(session)  # the session stays open for the next conversation

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        if self._session is None:
            raise RuntimeError(f"the MCP session to server {self.name!r} is not open; use `async with`")
        return await self._sessions.run(self._session.call(name, arguments))
