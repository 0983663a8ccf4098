"""One MCP session to one of the agent's servers, kept for a whole conversation.

:class:`McpSession` opens a session to a :class:`~agent_evals.agent.mcp_servers.StdioServer` (it
starts the server's process with the MCP SDK's stdio client; the process ends with the session)
or an :class:`~agent_evals.agent.mcp_servers.HttpServer` (streamable HTTP), lists the server's
tools once, keeps the ones its tool filter names (schemas taken from the server) and executes calls.

The session lives in a task of its own (the MCP client's task groups must be entered and left by
the same task). That has two consequences callers can rely on:

* a session that cannot open, or that breaks, reaches the caller as one :class:`ServerUnavailable`
  (kind ``system``) naming the server, never as an ``ExceptionGroup`` or a ``CancelledError``
  leaking out of the client's task group; for a stdio server the message ends with the last line
  the server wrote to its stderr (kept in a temporary file while the session lasts);
* an ``McpSession`` may be opened, used and closed from different tasks.

Errors, in two channels: a tool that fails or an error the server answers to a call (an MCP error)
is a :class:`ToolResult` with ``is_error`` for the model; a server that cannot be started or
reached, refuses the session or stops during the conversation raises :class:`ServerUnavailable`;
a filter naming a tool the server lacks is an :class:`AgentConfigError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any, Self

from agent_evals.agent.errors import AgentConfigError, ServerUnavailable
from agent_evals.agent.mcp_sdk import (
    exception_leaves,
    list_tools,
    mcp_tool_to_spec,
    parse_json,
    share_output_validators,
)
from agent_evals.agent.mcp_servers import HttpServer, McpServer, StdioServer, shown_url
from agent_evals.agent.types import ToolResult
from agent_evals.llm.tls import ssl_context
from agent_evals.llm.types import ToolSpec

__all__ = ["McpSession", "ServerUnavailable"]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 60.0
_CLOSE_TIMEOUT_S = 10.0
_STDERR_TAIL_BYTES = 4096
_LAST_LINE_CHARS = 300


@dataclass
class _Job:
    name: str
    arguments: dict[str, Any]
    future: asyncio.Future[ToolResult]


class _HttpErrors:
    """Remembers the last HTTP error status of the session (the MCP client hides it)."""

    def __init__(self) -> None:
        self.last_status: int | None = None

    async def on_response(self, response: Any) -> None:
        if response.status_code >= 400:
            self.last_status = response.status_code


class _ConnectionClosed(Exception):
    """The server's end of the session closed while a call was waiting (a stdio server that exited)."""

    def __init__(self, tool: str) -> None:
        super().__init__(tool)
        self.tool = tool


class McpSession:
    """An async context manager holding one MCP session to one server."""

    def __init__(self, server: McpServer, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.server = server
        self._timeout_s = timeout_s
        self._task: asyncio.Task[None] | None = None
        self._jobs: asyncio.Queue[_Job | None] = asyncio.Queue()
        self._ready: asyncio.Future[list[Any]] | None = None
        self._failure: BaseException | None = None
        self._stderr: IO[str] | None = None
        self.offered: dict[str, Any] = {}  # every tool the server lists, by name
        self.specs: list[ToolSpec] = []  # the tools the filter keeps, in its order

    @property
    def name(self) -> str:
        return self.server.name

    @property
    def names(self) -> list[str]:
        return [s["function"]["name"] for s in self.specs]

    @property
    def is_open(self) -> bool:
        """Opened and not ended (not closed, its server not stopped)."""
        return self._task is not None and not self._task.done()

    async def __aenter__(self) -> Self:
        if self._task is not None:
            raise RuntimeError(f"the MCP session to server {self.name!r} is already open")
        self._ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._session(), name=f"mcp-session {self.name}")
        try:
            self.offered = {tool.name: tool for tool in await self._ready}
            self.specs = self._select(self.offered)
        except BaseException:
            if not self._ready.done():  # we were cancelled while the session was opening
                self._ready.cancel()
                self._task.cancel()
            await self.aclose()
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """End the session (and a stdio server's process). A session that cannot close cleanly is
        logged, not raised: the conversation's results are already in hand."""
        task, self._task = self._task, None
        if task is None:
            return
        self._jobs.put_nowait(None)
        done, _ = await asyncio.wait({task}, timeout=_CLOSE_TIMEOUT_S)
        if not done:
            log.warning("the MCP session to server %r did not close within %.0f s; cancelled it", self.name,
                        _CLOSE_TIMEOUT_S)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call one tool; a tool-level or MCP error is an error result, a server gone raises."""
        if self._task is None:
            raise RuntimeError(f"the MCP session to server {self.name!r} is not open; use `async with`")
        if self._task.done():
            raise self._failure_or_closed()
        future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        # put_nowait, no await in between: the session cannot end between the check and the put
        self._jobs.put_nowait(_Job(name, dict(arguments), future))
        return await future

    # the session task ---------------------------------------------------------------------
    async def _session(self) -> None:
        """Open the session, list the tools, then run calls until told to stop (``None``)."""
        from mcp.client.client import Client  # lazy: loads mcp only when used (start-up time)

        errors = _HttpErrors()
        current: _Job | None = None
        try:
            async with self._transport(errors) as transport, Client(transport) as client:
                _resolve(self._ready, await list_tools(client))
                share_output_validators(client)
                while (current := await self._jobs.get()) is not None:
                    await self._run_job(client, current, errors)
        except BaseException as exc:
            failure = self._as_failure(exc, errors.last_status, opened=bool(self._ready and self._ready.done()))
            self._failure = failure
            waiting = [f for f in self._pending(current) if not f.done()]
            for future in waiting:
                future.set_exception(failure)
            if not waiting:  # nobody will see it otherwise (e.g. the server died after the last call)
                log.warning("the MCP session to server %r ended with an error: %s", self.name, failure)
            if isinstance(exc, asyncio.CancelledError) and _cancelled_from_outside():
                raise
        finally:
            self._fail_queued()
            if self._stderr is not None:
                self._stderr.close()

    @contextlib.asynccontextmanager
    async def _transport(self, errors: _HttpErrors) -> AsyncIterator[Any]:
        server = self.server
        if isinstance(server, StdioServer):
            from mcp.client.stdio import StdioServerParameters, stdio_client  # lazy: loads mcp only when used (start-up time)

            self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
            parameters = StdioServerParameters(
                command=server.command, args=list(server.args), env=dict(server.env), cwd=server.cwd
            )
            yield stdio_client(parameters, errlog=self._stderr)
            return
        import httpx2  # lazy: loads httpx2 only when used (start-up time)
        from mcp.client.streamable_http import streamable_http_client  # lazy: loads mcp only when used (start-up time)

        async with httpx2.AsyncClient(
            headers=dict(server.headers),
            timeout=httpx2.Timeout(self._timeout_s),
            verify=ssl_context(),
            event_hooks={"response": [errors.on_response]},
        ) as http:
            yield streamable_http_client(server.url, http_client=http)

    async def _run_job(self, client: Any, job: _Job, errors: _HttpErrors) -> None:
        """Run one call and settle its future; an MCP error becomes an error result, a closed
        connection ends the session."""
        from mcp.shared.exceptions import MCPError  # lazy: loads mcp only when used (start-up time)
        from mcp_types import CONNECTION_CLOSED  # lazy: loads mcp_types only when used (start-up time)

        errors.last_status = None
        try:
            result = await client.call_tool(job.name, job.arguments)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                raise _ConnectionClosed(job.name) from exc
            status = f" (HTTP {errors.last_status})" if errors.last_status else ""
            text = f"the MCP server {self.name} answered an error: {exc}{status}"
            _resolve(job.future, ToolResult(value=None, text=text, is_error=True, server=self.name))
            return
        except Exception as exc:  # noqa: BLE001 - handed to the caller, whose loop reports it to the model
            if not job.future.done():
                job.future.set_exception(exc)
            return
        text = "\n".join(getattr(c, "text", "") for c in result.content if getattr(c, "type", "") == "text")
        value: Any = result.structured_content
        if value is None:
            value = parse_json(text)
        _resolve(job.future, ToolResult(value=value, text=text, is_error=bool(result.is_error), server=self.name))

    def _pending(self, current: _Job | None) -> list[asyncio.Future[Any]]:
        futures: list[asyncio.Future[Any]] = []
        if self._ready is not None:
            futures.append(self._ready)
        if current is not None:
            futures.append(current.future)
        return futures

    def _fail_queued(self) -> None:
        failure = self._failure_or_closed()
        while not self._jobs.empty():
            job = self._jobs.get_nowait()
            if job is not None and not job.future.done():
                job.future.set_exception(failure)

    def _failure_or_closed(self) -> BaseException:
        if self._failure is not None:
            return self._failure
        return ServerUnavailable(f"the MCP session to server {self.name!r} is closed")

    # what ended the session -----------------------------------------------------------------
    def _as_failure(self, exc: BaseException, http_status: int | None, *, opened: bool) -> BaseException:
        """One clear exception for what ended the session (transport failures → ServerUnavailable)."""
        import httpx2  # lazy: loads httpx2 only when used (start-up time)
        from mcp.shared.exceptions import MCPError  # lazy: loads mcp only when used (start-up time)
        from mcp_types import CONNECTION_CLOSED  # lazy: loads mcp_types only when used (start-up time)

        leaves = [e for e in exception_leaves(exc) if not isinstance(e, asyncio.CancelledError)]
        for leaf in leaves:
            if isinstance(leaf, _ConnectionClosed):
                return self._unavailable(f"stopped during the conversation (calling {leaf.tool})", leaf)
            if isinstance(leaf, OSError) and isinstance(self.server, StdioServer):
                return self._unavailable(f"could not be started: {_spawn_problem(self.server, leaf)}", leaf,
                                         started=False)
            if isinstance(leaf, httpx2.HTTPStatusError):
                return self._refused(leaf.response.status_code, leaf)
            if isinstance(leaf, httpx2.TransportError):
                return self._unavailable(f"is not reachable: {type(leaf).__name__}: {leaf}", leaf)
            if isinstance(leaf, MCPError):
                if http_status is not None:
                    return self._refused(http_status, leaf)
                if isinstance(self.server, StdioServer) and leaf.code == CONNECTION_CLOSED:
                    return self._unavailable("stopped during the conversation" if opened else "exited at start", leaf)
                return self._unavailable(f"refused the MCP session: {leaf}", leaf)
        if leaves:
            return leaves[0]
        return self._unavailable("was cancelled", exc)

    def _unavailable(self, what: str, cause: BaseException, *, started: bool = True) -> ServerUnavailable:
        message = f"MCP server {self.name!r} {self._where()}{what}"
        tail = self._stderr_last_line()
        if isinstance(self.server, StdioServer) and started:
            message += f"; the last line of its stderr: {tail}" if tail else "; it wrote nothing to stderr"
        error = ServerUnavailable(message)
        error.__cause__ = cause
        return error

    def _refused(self, status: int, cause: BaseException) -> ServerUnavailable:
        named = self.server.header_variables if isinstance(self.server, HttpServer) else ()
        check = ", ".join(named) or "its headers"
        hint = f" (check {check})" if status in (401, 403) else ""
        return self._unavailable(f"refused the MCP session: HTTP {status}{hint}", cause)

    def _where(self) -> str:
        if isinstance(self.server, HttpServer):
            return f"at {shown_url(self.server.url)} "
        return f"({os.path.basename(self.server.command)}) "

    def _stderr_last_line(self) -> str:
        stream = self._stderr
        if stream is None or stream.closed:
            return ""
        try:
            stream.flush()
            size = stream.seek(0, os.SEEK_END)
            stream.seek(max(0, size - _STDERR_TAIL_BYTES))
            lines = [line.strip() for line in stream.read().splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        last = lines[-1] if lines else ""
        return last if len(last) <= _LAST_LINE_CHARS else last[:_LAST_LINE_CHARS] + "…"

    def _select(self, offered: Mapping[str, Any]) -> list[ToolSpec]:
        wanted = self.server.tools if self.server.tools is not None else tuple(offered)
        missing = [n for n in wanted if n not in offered]
        if missing:
            raise AgentConfigError(
                f"the tool filter of MCP server {self.name!r} names {', '.join(missing)}, which the server does "
                f"not offer (its tools: {', '.join(sorted(offered)) or 'none'})"
            )
        return [mcp_tool_to_spec(n, offered[n].description, offered[n].input_schema) for n in wanted]


def _spawn_problem(server: StdioServer, exc: OSError) -> str:
    """Why the process could not be started, from the ``OSError`` of the spawn."""
    if server.cwd is not None and not os.path.isdir(server.cwd):
        return f"its cwd {server.cwd} is not a folder"
    if isinstance(exc, FileNotFoundError):
        return f"command {server.command!r} not found (not a file, nor on PATH)"
    if isinstance(exc, PermissionError):
        return f"command {server.command!r} is not executable"
    return f"{type(exc).__name__}: {exc.strerror or exc}"


def _resolve(future: asyncio.Future[Any] | None, value: Any) -> None:
    if future is not None and not future.done():  # the caller may have given up (cancelled)
        future.set_result(value)


def _cancelled_from_outside() -> bool:
    """True when our own task is being cancelled (not the MCP client's internal cancel scope)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
