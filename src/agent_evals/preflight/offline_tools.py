"""The tools the kit's agent is offered, listed without a running system: what each built-in pack's
system offers offline (the portal's, from its generated catalog, without the MCP SDK)."""

from __future__ import annotations

from functools import cache

from agent_evals.llm.types import ToolSpec
from agent_evals.packs import built_in


@cache
def portal_tool_specs() -> dict[str, ToolSpec]:
    """Every tool the built-in systems offer, as the agent's model sees it, by name."""
    specs: dict[str, ToolSpec] = {}
    for pack in built_in().values():
        specs.update(pack.system.offered_tools() or {})
    return specs
