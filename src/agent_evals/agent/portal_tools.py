"""The portal's MCP tools, as the agent loop sees them: one MCP session per conversation.

``PortalTools`` opens one streamable-HTTP MCP session to ``{PORTAL_URL}/mcp/`` and
keeps it for the whole conversation. It lists the server's tools once, offers the
model the ones the agent configuration allows (schemas taken from the server) and
executes calls. Tool-level failures come back as error results for the model; a
portal that cannot be reached raises :class:`PortalUnavailable`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from agent_evals.llm.types import ToolSpec


class PortalUnavailable(RuntimeError):
    """The portal could not be reached or refused the session (e.g. a wrong token)."""


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
                "PORTAL_URL is not set: start a portal (`agent-evals portal serve`) and set PORTAL_URL, "
                "or run the suites with `agent-evals run`, which starts one"
            )
        return cls(url=url.rstrip("/"), token=env.get("PORTAL_TOKEN") or None, headers=dict(headers or {}))

    @property
    def mcp_url(self) -> str:
        return f"{self.url.rstrip('/')}/mcp/"

    def http_headers(self) -> dict[str, str]:
        out = {k: v for k, v in self.headers.items() if v}
        if self.token:
            out["Authorization"] = f"Bearer {self.token}"
        return out


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer: ``value`` is parsed JSON when possible; ``text`` goes to the model."""

    value: Any
    text: str
    is_error: bool


def mcp_tool_to_spec(name: str, description: str | None, input_schema: Mapping[str, Any]) -> ToolSpec:
    """An MCP tool definition as an OpenAI function tool."""
    parameters = dict(input_schema) if input_schema else {"type": "object", "properties": {}}
    parameters.pop("title", None)
    return {
        "type": "function",
        "function": {"name": name, "description": description or "", "parameters": parameters},
    }


class PortalTools:
    """An async context manager holding one MCP session for a conversation."""

    def __init__(self, connection: PortalConnection, allowed: Sequence[str] | None = None) -> None:
        self._connection = connection
        self._allowed = tuple(allowed) if allowed is not None else None
        self._stack: AsyncExitStack | None = None
        self._client: Any = None
        self.specs: list[ToolSpec] = []

    @property
    def names(self) -> list[str]:
        return [s["function"]["name"] for s in self.specs]

    async def __aenter__(self) -> PortalTools:
        import httpx2
        from mcp.client.client import Client
        from mcp.client.streamable_http import streamable_http_client

        stack = AsyncExitStack()
        try:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=self._connection.http_headers(), timeout=httpx2.Timeout(60.0))
            )
            transport = streamable_http_client(self._connection.mcp_url, http_client=http)
            self._client = await stack.enter_async_context(Client(transport))
            listed = await self._client.list_tools()
        except BaseException as exc:
            await _close_quietly(stack)
            if _is_transport_failure(exc):
                raise _as_portal_error(exc, self._connection.url) from exc
            raise
        self._stack = stack
        offered = {t.name: t for t in listed.tools}
        wanted = self._allowed if self._allowed is not None else tuple(offered)
        missing = [n for n in wanted if n not in offered]
        if missing:
            await self.__aexit__(None, None, None)
            raise ValueError(
                f"the agent configuration allows tool(s) {', '.join(missing)} that the portal at "
                f"{self._connection.url} does not offer (portal tools: {', '.join(sorted(offered))})"
            )
        self.specs = [
            mcp_tool_to_spec(n, offered[n].description, offered[n].input_schema) for n in wanted
        ]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._stack, self._client = self._stack, None, None
        if stack is None:
            return
        try:
            await stack.aclose()
        except Exception as close_exc:  # the session could not close cleanly
            if exc is None and _is_transport_failure(close_exc):
                raise _as_portal_error(close_exc, self._connection.url) from close_exc
            if exc is None:
                raise

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call one tool; a tool-level error is an error result, a dead portal raises."""
        if self._client is None:
            raise RuntimeError("PortalTools is not open; use `async with PortalTools(...)`")
        try:
            result = await self._client.call_tool(name, dict(arguments))
        except BaseException as exc:
            if _is_transport_failure(exc):
                raise _as_portal_error(exc, self._connection.url) from exc
            raise
        text = "\n".join(getattr(c, "text", "") for c in result.content if getattr(c, "type", "") == "text")
        value: Any = result.structured_content
        if value is None:
            value = _parse_json(text)
        return ToolResult(value=value, text=text, is_error=bool(result.is_error))


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


def _is_transport_failure(exc: BaseException) -> bool:
    import httpx2

    return any(isinstance(e, (httpx2.TransportError, httpx2.HTTPStatusError)) for e in _leaves(exc))


def _as_portal_error(exc: BaseException, url: str) -> PortalUnavailable:
    """Turn a transport failure (possibly wrapped in exception groups) into one clear error."""
    import httpx2

    for leaf in _leaves(exc):
        if isinstance(leaf, httpx2.HTTPStatusError):
            status = leaf.response.status_code
            hint = " (check PORTAL_TOKEN)" if status in (401, 403) else ""
            return PortalUnavailable(f"the portal at {url} refused the MCP session: HTTP {status}{hint}")
        if isinstance(leaf, httpx2.TransportError):
            return PortalUnavailable(f"the portal at {url} is not reachable: {type(leaf).__name__}: {leaf}")
    return PortalUnavailable(f"the portal at {url} failed: {exc!r}")


async def _close_quietly(stack: AsyncExitStack) -> None:
    try:
        await stack.aclose()
    except Exception:  # noqa: BLE001 - already failing; the original error is raised instead
        pass
