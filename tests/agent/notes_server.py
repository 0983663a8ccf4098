"""A small stdio MCP server for the agent's tests (run as ``python notes_server.py``).

Tools: ``add_note(text)`` (returns the notes so far), ``count_notes()``, ``echo_env(name)`` (the
value of one of its environment variables) and ``stop_server()``, which writes a line to stderr and
exits the process at once (a server that dies mid-conversation). With ``NOTES_EXIT_AT_START`` set it
writes two lines to stderr and exits before answering anything (a server that exits at start).
"""

from __future__ import annotations

import os
import sys

if os.environ.get("NOTES_EXIT_AT_START"):
    print("notes: starting", file=sys.stderr)
    print(f"notes: fatal: {os.environ['NOTES_EXIT_AT_START']}", file=sys.stderr, flush=True)
    sys.exit(3)

from mcp.server.mcpserver import MCPServer  # noqa: E402 - after the early exit, which needs no SDK

app = MCPServer("notes")
NOTES: list[str] = []


@app.tool()
def add_note(text: str) -> list[str]:
    """Add a note; returns every note so far."""
    NOTES.append(text)
    return list(NOTES)


@app.tool()
def count_notes() -> int:
    """How many notes there are."""
    return len(NOTES)


@app.tool()
def echo_env(name: str) -> str:
    """The value of the server's environment variable ``name`` (empty when unset)."""
    return os.environ.get(name, "")


@app.tool()
def stop_server() -> str:
    """Exit the server process at once."""
    print("notes: stopping on request", file=sys.stderr, flush=True)
    os._exit(4)


if __name__ == "__main__":
    app.run("stdio")
