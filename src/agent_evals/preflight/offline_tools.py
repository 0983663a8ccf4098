"""The portal's tools, listed without a running portal (the MCP server built in-process)."""

from __future__ import annotations

import asyncio
from functools import cache

from agent_evals.agent.portal_tools import mcp_tool_to_spec
from agent_evals.llm.types import ToolSpec


@cache
def portal_tool_specs() -> dict[str, ToolSpec]:
    """Every portal tool as the agent's model sees it, by name (as ``PortalTools`` converts them)."""
    from agent_evals.portal.tools import build_mcp

    tools = asyncio.run(build_mcp(None).list_tools())  # type: ignore[arg-type]  # listing needs no portal
    return {t.name: mcp_tool_to_spec(t.name, t.description, t.input_schema) for t in tools}
