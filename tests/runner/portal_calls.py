"""Create pull requests through the portal's MCP tools, as an agent would (test helper)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from agent_evals.agent.mcp_session import McpSession
from agent_evals.packs.spoke.golden import apply_changes, seed_spoke
from agent_evals.packs.spoke.portal.process import PortalProcess
from tests.mcp_portal import portal_server

# crm-dev-neu moved to another range: a valid copy whatever its name.
_RANGES = {"crm-dev-weu": ("10.20.32", "10.20.33"), "crm-dev-gwc": ("10.20.28", "10.20.29")}


def copy_of_crm_dev(name: str) -> dict:
    app, data = _RANGES[name]
    return apply_changes(
        seed_spoke("crm-dev-neu"),
        {
            "/name": name,
            "/addressSpace/0": f"{app}.0/22",
            "/subnets/0/addressPrefix": f"{app}.0/24",
            "/subnets/1/addressPrefix": f"{data}.0/26",
        },
    )


def create_pr(portal: PortalProcess, name: str, headers: Mapping[str, str]) -> int:
    async def call() -> int:
        async with McpSession(portal_server(portal.url, portal.token, headers=headers)) as tools:
            result = await tools.call(
                "create_spoke_pull_request",
                {"spoke_name": name, "config": copy_of_crm_dev(name), "title": f"Add {name}", "description": "test"},
            )
        assert not result.is_error, result.text
        return int(result.value["id"])

    return asyncio.run(call())
