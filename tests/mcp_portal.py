"""The live portal as an MCP server of the agent (test helper): what ``agent.yaml``'s ``portal`` server
resolves to, built from a running portal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agent_evals.agent.mcp_servers import HttpServer


def portal_server(
    url: str, token: str | None = None, *, headers: Mapping[str, str] | None = None, tools: Sequence[str] | None = None
) -> HttpServer:
    """The portal at ``url`` with ``token``; ``tools`` None offers every tool it has."""
    sent = {**({"Authorization": f"Bearer {token}"} if token else {}), **dict(headers or {})}
    return HttpServer("portal", f"{url.rstrip('/')}/mcp/", sent, tuple(tools) if tools is not None else None,
                      header_variables=("PORTAL_TOKEN",))
