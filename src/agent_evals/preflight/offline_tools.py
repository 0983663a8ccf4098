"""The portal's tools, listed without a running portal (from its generated catalog, without the MCP SDK)."""

from __future__ import annotations

from functools import cache

from agent_evals.agent.portal_tools import mcp_tool_to_spec
from agent_evals.llm.types import ToolSpec
from agent_evals.packs.spoke.portal.tool_catalog import catalog


@cache
def portal_tool_specs() -> dict[str, ToolSpec]:
    """Every portal tool as the agent's model sees it, by name (as ``PortalTools`` converts them)."""
    return {t["name"]: mcp_tool_to_spec(t["name"], t["description"], t["input_schema"]) for t in catalog()}
