"""The portal's tools as its MCP server lists them, kept in ``tool_catalog.json`` beside this file.

The preflight needs the tools' names, descriptions and schemas (to name a tool an agent allows
that the portal lacks, and for the cassettes' fingerprints) before any portal runs; the warm server
compiles the validators of their output schemas once, before it forks the workers (``warm_workers``
in ``agent_evals.packs.spoke.portal.server``). Building the
MCP server in-process to list them costs about a second of importing the MCP SDK on every check
and every run, so the list is read from the catalog instead (standard library only). The catalog
is generated, never edited: ``python -m agent_evals.packs.spoke.portal.tool_catalog`` writes it from the
server, and ``tests/portal/test_tool_catalog.py`` fails when it differs from what the server
lists, naming the command.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any
import asyncio

CATALOG = Path(__file__).with_name("tool_catalog.json")
WRITE = "python -m agent_evals.packs.spoke.portal.tool_catalog"


@cache
def catalog() -> tuple[dict[str, Any], ...]:
    """``({name, description, input_schema, output_schema}, …)`` in the server's order."""
    return tuple(json.loads(CATALOG.read_text(encoding="utf-8"))["tools"])


def listed_by_the_server() -> list[dict[str, Any]]:
    """What the portal's MCP server lists now (imports the MCP SDK)."""
    from agent_evals.packs.spoke.portal.tools import build_mcp  # lazy: loads jsonschema, mcp, pydantic only when used (start-up time)

    tools = asyncio.run(build_mcp(None).list_tools())  # type: ignore[arg-type]  # listing needs no portal
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema,
             "output_schema": t.output_schema} for t in tools]


def main() -> int:
    tools = listed_by_the_server()
    CATALOG.write_text(json.dumps({"generated_by": WRITE, "tools": tools}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(tools)} tool(s) to {CATALOG}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
