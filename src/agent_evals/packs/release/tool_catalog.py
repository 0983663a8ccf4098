"""The tools the release agent's two servers offer, kept in ``tool_catalog.json`` beside this file.

The preflight names the tools a check forbids (``git_reset``) and the agent is never offered; it
must know they exist without starting the servers (they need a working copy, made only when a
conversation starts). The catalog is generated, never edited: ``python -m
agent_evals.packs.release.tool_catalog`` starts ``mcp-server-git`` and the filesystem server as the
agent's configuration names them, on a scratch copy of the seed, and writes what they list;
``tests/packs/release/test_tool_catalog.py`` fails when it differs, naming the command.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from agent_evals.packs.release.seed_repo import build_seed_repository

CATALOG = Path(__file__).with_name("tool_catalog.json")
WRITE = "python -m agent_evals.packs.release.tool_catalog"
AGENT = "release-notes"


@cache
def catalog() -> tuple[dict[str, Any], ...]:
    """``({server, name, description, input_schema}, …)`` in the servers' order."""
    return tuple(json.loads(CATALOG.read_text(encoding="utf-8"))["tools"])


def listed_by_the_servers() -> list[dict[str, Any]]:
    """What the agent's servers list now, every tool (no filter), on a scratch copy of the seed."""

    from agent_evals.authoring import (  # lazy: the agent's configuration, only to regenerate or test the catalog
        StdioServer,
        load_agent_config,
        resolve_servers,
    )

    config = load_agent_config(AGENT)
    with tempfile.TemporaryDirectory(prefix="release-catalog-") as scratch:
        repo = build_seed_repository(Path(scratch) / "tally")
        servers = resolve_servers(AGENT, config.servers, {"REPO": str(repo)}, environ=os.environ, base_dir=config.folder)
        listed = []
        for server in servers:
            assert isinstance(server, StdioServer)
            listed += asyncio.run(_list(server))
        return listed


async def _list(server: Any) -> list[dict[str, Any]]:
    from mcp import ClientSession  # lazy: only to regenerate or test the catalog
    from mcp.client.stdio import (  # lazy: only to regenerate or test the catalog
        StdioServerParameters,
        stdio_client,
    )

    parameters = StdioServerParameters(command=server.command, args=list(server.args), env=dict(server.env),
                                       cwd=server.cwd)
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
    return [{"server": server.name, "name": t.name, "description": t.description or "", "input_schema": t.input_schema}
            for t in tools]


def main() -> int:
    tools = listed_by_the_servers()
    CATALOG.write_text(json.dumps({"generated_by": WRITE, "tools": tools}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(tools)} tool(s) to {CATALOG}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
