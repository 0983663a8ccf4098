"""The portal's generated tool catalog (what the preflight reads instead of importing the MCP SDK)
is exactly what its MCP server lists: a tool changed without regenerating it fails here."""

from __future__ import annotations

import sys

from agent_evals.packs.spoke.portal.tool_catalog import WRITE, catalog, listed_by_the_server
from agent_evals.preflight.offline_tools import portal_tool_specs


def test_the_catalog_is_what_the_server_lists() -> None:
    assert list(catalog()) == listed_by_the_server(), f"the portal's tools changed: run `{WRITE}` and commit the file"


def test_the_preflight_lists_the_tools_without_the_mcp_sdk() -> None:
    import subprocess

    probe = ("import sys; from agent_evals.preflight.offline_tools import portal_tool_specs as s; "
             "print(len(s()), 'mcp' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == [str(len(portal_tool_specs())), "False"], done.stderr
