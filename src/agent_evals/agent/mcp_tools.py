"""The tools of all the agent's MCP servers, as one list: what the loop calls (its ``ToolExecutor``).

:class:`McpTools` opens one :class:`~agent_evals.agent.mcp_session.McpSession` per server, all at
once (a stdio server's start overlaps the others'), and offers the model their filtered tools
server by server, in the order ``agent.yaml`` lists them. A call goes to the server that offers the
tool, and its :class:`ToolResult` names that server (the record's ``ToolCall.server``). A stdio
server with ``lifetime: worker`` is not started for the conversation: its kept session is used
(:class:`~agent_evals.agent.worker_sessions.KeptSession`), and stays open when the conversation ends.

Opening fails as a whole, with the first server's error in the configuration's order (the sessions
already open are closed): :class:`ServerUnavailable` for a server that cannot be started or
reached, :class:`AgentConfigError` for a filter naming a tool its server lacks, or for a tool
name two servers both offer to the model (a filter names each tool of one server only, which
``agent.yaml`` checks; this catches servers given without a filter).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Self

from agent_evals.agent.errors import AgentConfigError
from agent_evals.agent.mcp_servers import McpServer, StdioServer
from agent_evals.agent.mcp_session import DEFAULT_TIMEOUT_S, McpSession
from agent_evals.agent.worker_sessions import KeptSession
from agent_evals.agent.types import ToolResult
from agent_evals.llm.types import ToolSpec

__all__ = ["McpTools"]


class McpTools:
    """An async context manager holding one MCP session per server for a conversation."""

    def __init__(self, servers: Sequence[McpServer], *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.sessions = [_session(server, timeout_s) for server in servers]
        self._route: dict[str, McpSession | KeptSession] = {}
        self.specs: list[ToolSpec] = []

    @property
    def names(self) -> list[str]:
        return [s["function"]["name"] for s in self.specs]

    async def __aenter__(self) -> Self:
        try:
            opened = await asyncio.gather(*(s.__aenter__() for s in self.sessions), return_exceptions=True)
        except BaseException:  # cancelled while opening: close what did open
            await self.aclose()
            raise
        failures = [r for r in opened if isinstance(r, BaseException)]
        try:
            if failures:
                raise failures[0]
            self._route = _routes(self.sessions)
        except BaseException:
            await self.aclose()
            raise
        self.specs = [spec for session in self.sessions for spec in session.specs]
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every session (each logs, never raises, what kept it from closing cleanly)."""
        self._route = {}
        await asyncio.gather(*(session.aclose() for session in self.sessions))

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call ``name`` on the server that offers it (see :meth:`McpSession.call`)."""
        session = self._route.get(name)
        if session is None:
            return ToolResult(None, f"no MCP server of the agent offers a tool {name!r}", is_error=True)
        return await session.call(name, arguments)


def _session(server: McpServer, timeout_s: float) -> McpSession | KeptSession:
    if isinstance(server, StdioServer) and server.lifetime == "worker":
        return KeptSession(server, timeout_s=timeout_s)
    return McpSession(server, timeout_s=timeout_s)


def _routes(sessions: Sequence[McpSession | KeptSession]) -> dict[str, McpSession | KeptSession]:
    route: dict[str, McpSession | KeptSession] = {}
    for session in sessions:
        for tool in session.names:
            if tool in route:
                raise AgentConfigError(
                    f"tool {tool!r} is offered by both MCP servers {route[tool].name!r} and {session.name!r}: the "
                    "model would not know which one it calls; give one of them a `tools` filter without it"
                )
            route[tool] = session
    return route
