"""The portal's MCP tools, as the agent loop sees them: one MCP session per conversation.

``PortalTools`` opens one streamable-HTTP MCP session to ``{PORTAL_URL}/mcp/`` and
keeps it for the whole conversation. It lists the server's tools once, offers the
model the ones the agent configuration allows (schemas taken from the server) and
executes calls.

The session lives in a task of its own (the MCP client's task groups must be entered
and left by the same task). That has two consequences callers can rely on:

* a failing connection reaches the caller as one :class:`PortalUnavailable` with a
  clear message, never as an ``ExceptionGroup`` or a ``CancelledError`` leaking out of
  the client's task group;
* ``PortalTools`` may be opened, used and closed from different tasks.

Errors, in two channels: a tool that fails or an error the portal answers to a call
(an MCP error) is a :class:`ToolResult` with ``is_error`` for the model; a portal that
cannot be reached or refuses the session raises :class:`PortalUnavailable`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

from agent_evals.agent.config import AgentConfigError
from agent_evals.agent.types import ToolResult
from agent_evals.llm.types import ToolSpec
from agent_evals.system import SystemUnavailable

__all__ = ["PortalConnection", "PortalTools", "PortalUnavailable", "ToolResult", "mcp_tool_to_spec"]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 60.0
_CLOSE_TIMEOUT_S = 10.0


class PortalUnavailable(SystemUnavailable, RuntimeError):
    """The portal could not be reached or refused the session (e.g. a wrong token): kind ``portal``."""


@dataclass(frozen=True)
class PortalConnection:
    """Where the portal is and what to send with every request.

    ``headers`` carry traceability (``X-Eval-Id``, ``X-Test-Id``, ``X-Created-By``);
    the token is kept out of ``repr``.
    """

    url: str
    token: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, *, headers: Mapping[str, str] | None = None
    ) -> PortalConnection:
        env = os.environ if env is None else env
        url = env.get("PORTAL_URL", "").strip()
        if not url:
            raise PortalUnavailable(
                "PORTAL_URL is not set: start a portal (`npm run portal`) and set PORTAL_URL, "
                "or run the suites with `npm run eval`, which starts one"
            )
        return cls(url=url.rstrip("/"), token=env.get("PORTAL_TOKEN") or None, headers=dict(headers or {}))

    def with_headers(self, headers: Mapping[str, str] | None) -> PortalConnection:
        """The same connection with ``headers`` added (they win over existing ones)."""
        if not headers:
            return self
        return PortalConnection(self.url, self.token, {**self.headers, **headers})

    @property
    def mcp_url(self) -> str:
        return f"{self.url.rstrip('/')}/mcp/"

    def http_headers(self) -> dict[str, str]:
        out = {k: v for k, v in self.headers.items() if v}
        if self.token:
            out["Authorization"] = f"Bearer {self.token}"
        return out


def mcp_tool_to_spec(name: str, description: str | None, input_schema: Mapping[str, Any]) -> ToolSpec:
    """An MCP tool definition as an OpenAI function tool."""
    parameters = dict(input_schema) if input_schema else {"type": "object", "properties": {}}
    parameters.pop("title", None)
    return {
        "type": "function",
        "function": {"name": name, "description": description or "", "parameters": parameters},
    }


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


class PortalTools:
    """An async context manager holding one MCP session for a conversation."""

    def __init__(
        self,
        connection: PortalConnection,
        allowed: Sequence[str] | None = None,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self._connection = connection
        self._allowed = tuple(allowed) if allowed is not None else None
        self._timeout_s = timeout_s
        self._task: asyncio.Task[None] | None = None
        self._jobs: asyncio.Queue[_Job | None] = asyncio.Queue()
        self._ready: asyncio.Future[list[Any]] | None = None
        self._failure: BaseException | None = None
        self.specs: list[ToolSpec] = []

    @property
    def names(self) -> list[str]:
        return [s["function"]["name"] for s in self.specs]

    async def __aenter__(self) -> Self:
        if self._task is not None:
            raise RuntimeError("this PortalTools is already open")
        self._ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._session(), name=f"mcp-session {self._connection.url}")
        try:
            offered = {tool.name: tool for tool in await self._ready}
            self.specs = self._select(offered)
        except BaseException:
            if not self._ready.done():  # we were cancelled while the session was opening
                self._ready.cancel()
                self._task.cancel()
            await self.aclose()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """End the session. A session that cannot close cleanly is logged, not raised:
        the conversation's results are already in hand."""
        task, self._task = self._task, None
        if task is None:
            return
        self._jobs.put_nowait(None)
        done, _ = await asyncio.wait({task}, timeout=_CLOSE_TIMEOUT_S)
        if not done:
            log.warning(
                "the MCP session to %s did not close within %.0f s; cancelled it",
                self._connection.url,
                _CLOSE_TIMEOUT_S,
            )
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call one tool; a tool-level or MCP error is an error result, a dead portal raises."""
        if self._task is None:
            raise RuntimeError("PortalTools is not open; use `async with PortalTools(...)`")
        if self._task.done():
            raise self._failure_or_closed()
        future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        # put_nowait, no await in between: the session cannot end between the check and the put
        self._jobs.put_nowait(_Job(name, dict(arguments), future))
        return await future

    # the session task ---------------------------------------------------------------------
    async def _session(self) -> None:
        """Open the session, list the tools, then run calls until told to stop (``None``)."""
        import httpx2
        from mcp.client.client import Client
        from mcp.client.streamable_http import streamable_http_client

        errors = _HttpErrors()
        current: _Job | None = None
        try:
            async with (
                httpx2.AsyncClient(
                    headers=self._connection.http_headers(),
                    timeout=httpx2.Timeout(self._timeout_s),
                    verify=_ssl_context(),
                    event_hooks={"response": [errors.on_response]},
                ) as http,
                Client(streamable_http_client(self._connection.mcp_url, http_client=http)) as client,
            ):
                _resolve(self._ready, await _list_tools(client))
                _share_output_validators(client)
                while (current := await self._jobs.get()) is not None:
                    await _run_job(client, current, errors)
        except BaseException as exc:
            failure = self._as_failure(exc, errors.last_status)
            self._failure = failure
            waiting = [f for f in self._pending(current) if not f.done()]
            for future in waiting:
                future.set_exception(failure)
            if not waiting:  # nobody will see it otherwise (e.g. the portal died after the last call)
                log.warning("the MCP session to %s ended with an error: %s", self._connection.url, failure)
            if isinstance(exc, asyncio.CancelledError) and _cancelled_from_outside():
                raise
        finally:
            self._fail_queued()

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
        return PortalUnavailable(f"the MCP session to the portal at {self._connection.url} is closed")

    def _as_failure(self, exc: BaseException, http_status: int | None) -> BaseException:
        """One clear exception for what ended the session (transport failures → PortalUnavailable)."""
        import httpx2
        from mcp.shared.exceptions import MCPError

        url = self._connection.url
        leaves = [e for e in _leaves(exc) if not isinstance(e, asyncio.CancelledError)]
        for leaf in leaves:
            if isinstance(leaf, httpx2.HTTPStatusError):
                return _refused(url, leaf.response.status_code, leaf)
            if isinstance(leaf, httpx2.TransportError):
                return _chained(
                    PortalUnavailable(f"the portal at {url} is not reachable: {type(leaf).__name__}: {leaf}"),
                    leaf,
                )
            if isinstance(leaf, MCPError):
                if http_status is not None:
                    return _refused(url, http_status, leaf)
                return _chained(
                    PortalUnavailable(f"the portal at {url} refused the MCP session: {leaf}"), leaf
                )
        if leaves:
            return leaves[0]
        return _chained(PortalUnavailable(f"the MCP session to the portal at {url} was cancelled"), exc)

    def _select(self, offered: Mapping[str, Any]) -> list[ToolSpec]:
        wanted = self._allowed if self._allowed is not None else tuple(offered)
        missing = [n for n in wanted if n not in offered]
        if missing:
            raise AgentConfigError(
                f"the agent configuration allows tool(s) {', '.join(missing)} that the portal at "
                f"{self._connection.url} does not offer (portal tools: {', '.join(sorted(offered))})"
            )
        return [mcp_tool_to_spec(n, offered[n].description, offered[n].input_schema) for n in wanted]


# Compiled output-schema validators, shared by this process's sessions: the SDK compiles one per tool
# and session (~10 ms each, most of a replayed conversation's CPU); the portal's schemas don't change.
_VALIDATORS: dict[tuple[str, str], Any] = {}


def _share_output_validators(client: Any) -> None:
    """Give a new session the validators an earlier session compiled for the same schemas (the SDK
    reuses a session's cached validator while the tool's schema is unchanged). Best effort: an SDK
    without this cache is left as it is."""
    session = getattr(client, "session", None)
    schemas = getattr(session, "_tool_output_schemas", None)
    cache = getattr(session, "_tool_output_validators", None)
    compile_one = getattr(session, "_output_schema_validator", None)
    if not (isinstance(schemas, dict) and isinstance(cache, dict) and callable(compile_one)):
        return
    for name, schema in schemas.items():
        if not isinstance(schema, dict):
            continue
        key = (str(name), json.dumps(schema, sort_keys=True))
        if key in _VALIDATORS:
            cache[name] = _VALIDATORS[key]
            continue
        try:
            _VALIDATORS[key] = compile_one(name, schema)  # compiles and caches it in this session too
        except RuntimeError:
            continue  # an invalid schema: the SDK says so when the tool is called


async def _list_tools(client: Any) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    while True:
        listed = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
        tools.extend(listed.tools)
        cursor = listed.next_cursor
        if not cursor:
            return tools


async def _run_job(client: Any, job: _Job, errors: _HttpErrors) -> None:
    """Run one call and settle its future; an MCP error becomes an error result."""
    from mcp.shared.exceptions import MCPError

    errors.last_status = None
    try:
        result = await client.call_tool(job.name, job.arguments)
    except MCPError as exc:
        status = f" (HTTP {errors.last_status})" if errors.last_status else ""
        text = f"the portal answered an error: {exc}{status}"
        _resolve(job.future, ToolResult(value=None, text=text, is_error=True))
        return
    except Exception as exc:  # noqa: BLE001 - handed to the caller, whose loop reports it to the model
        if not job.future.done():
            job.future.set_exception(exc)
        return
    text = "\n".join(getattr(c, "text", "") for c in result.content if getattr(c, "type", "") == "text")
    value: Any = result.structured_content
    if value is None:
        value = _parse_json(text)
    _resolve(job.future, ToolResult(value=value, text=text, is_error=bool(result.is_error)))


def _resolve(future: asyncio.Future[Any] | None, value: Any) -> None:
    if future is not None and not future.done():  # the caller may have given up (cancelled)
        future.set_result(value)


def _refused(url: str, status: int, cause: BaseException) -> PortalUnavailable:
    hint = " (check PORTAL_TOKEN)" if status in (401, 403) else ""
    return _chained(
        PortalUnavailable(f"the portal at {url} refused the MCP session: HTTP {status}{hint}"), cause
    )


def _chained(error: PortalUnavailable, cause: BaseException) -> PortalUnavailable:
    error.__cause__ = cause
    return error


def _cancelled_from_outside() -> bool:
    """True when our own task is being cancelled (not the MCP client's internal cancel scope)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """httpx2's default TLS settings, built once per process: building them takes ~25 ms,
    which a new session per conversation (or per chat message) would pay every time."""
    import httpx2

    return httpx2.create_ssl_context()


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return text


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for sub in exc.exceptions:
            out.extend(_leaves(sub))
        return out
    return [exc]
