"""Stdio servers kept for a worker's life (``lifetime: worker``): one process serves the conversations
a process holds one after another, each in its own event loop (``asyncio.run``, as the provider does)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_evals.agent.errors import ServerUnavailable
from agent_evals.agent.mcp_servers import StdioServer, parse_servers
from agent_evals.agent.mcp_tools import McpTools
from agent_evals.agent.worker_sessions import WORKER_SESSIONS

NOTES = Path(__file__).with_name("notes_server.py")
TOOLS = ("add_note", "count_notes", "echo_env", "stop_server")


def _server(lifetime: str = "worker", **env: str) -> StdioServer:
    return StdioServer("notes", sys.executable, (str(NOTES),), env=env, tools=TOOLS, lifetime=lifetime)  # type: ignore[arg-type]


def _servers_running() -> list[str]:
    """The notes servers this process started that still run."""
    found = subprocess.run(["pgrep", "-P", str(os.getpid()), "-f", str(NOTES)], capture_output=True, text=True)
    return [pid for pid in found.stdout.split() if _state(pid) not in ("Z", "")]


def _state(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


@pytest.fixture(autouse=True)
def closed() -> Iterator[None]:
    yield
    WORKER_SESSIONS.close()
    assert _servers_running() == []


def _conversation(server: StdioServer, *calls: tuple[str, dict[str, str]]) -> list[str]:
    """One conversation in an event loop of its own: the calls' texts."""

    async def go() -> list[str]:
        async with McpTools([server]) as tools:
            return [(await tools.call(name, arguments)).text for name, arguments in calls]

    return asyncio.run(go())


def test_a_kept_server_serves_the_next_conversation_in_its_process() -> None:
    add = ("add_note", {"text": "x"})
    count = ("count_notes", {})
    assert _conversation(_server(), add, count) == ["x", "1"]
    assert _conversation(_server(), add, count) == ["x\nx", "2"]  # the same process
    assert len(_servers_running()) == 1  # kept after the conversation
    assert _conversation(_server("conversation"), add, count) == ["x", "1"]  # its own server, stopped at its end
    WORKER_SESSIONS.close()
    assert _servers_running() == []
    assert _conversation(_server(), ("count_notes", {})) == ["0"]  # after close: started again


def test_another_configuration_replaces_the_kept_server() -> None:
    assert _conversation(_server(COLOUR="red"), ("add_note", {"text": "x"}), ("echo_env", {"name": "COLOUR"})) == [
        "x", "red"]
    assert _conversation(_server(COLOUR="blue"), ("count_notes", {}), ("echo_env", {"name": "COLOUR"})) == ["0", "blue"]
    assert len(_servers_running()) == 1  # the red one was stopped


def test_a_kept_server_that_died_is_said_and_started_again_by_the_next_conversation() -> None:
    _conversation(_server(), ("add_note", {"text": "x"}))
    with pytest.raises(ServerUnavailable, match=r"MCP server 'notes' \(python[\d.]*\) stopped during the conversation"):
        _conversation(_server(), ("stop_server", {}))
    assert _conversation(_server(), ("count_notes", {})) == ["0"]


def test_a_kept_server_that_cannot_start_is_the_same_one_line() -> None:
    broken = _server(NOTES_EXIT_AT_START="no config")
    with pytest.raises(ServerUnavailable, match="exited at start; the last line of its stderr: notes: fatal: no config"):
        _conversation(broken)
    with pytest.raises(ServerUnavailable, match="notes: fatal: no config"):  # and again: nothing kept of it
        _conversation(broken)


def test_lifetime_is_read_from_agent_yaml_and_defaults_to_the_conversation() -> None:
    kept, own = parse_servers({"a": {"command": "c", "tools": ["x"], "lifetime": "worker"},
                               "b": {"command": "c", "tools": ["y"]}})
    assert isinstance(kept, StdioServer) and kept.lifetime == "worker" and "lifetime='worker'" in repr(kept)
    assert isinstance(own, StdioServer) and own.lifetime == "conversation" and "lifetime" not in repr(own)


def test_conversations_at_once_with_other_configurations_each_keep_their_own_server() -> None:
    red, blue = _server(COLOUR="red"), _server(COLOUR="blue")
    colour = ("echo_env", {"name": "COLOUR"})

    async def both() -> list[str]:
        async with McpTools([red]) as first:
            await first.call("add_note", {"text": "x"})
            async with McpTools([blue]) as second:  # does not close the red server the first one uses
                return [(await first.call(*colour)).text, (await second.call(*colour)).text,
                        (await first.call("count_notes", {})).text]

    assert asyncio.run(both()) == ["red", "blue", "1"]
    assert len(_servers_running()) == 2  # both kept, neither in use
    assert _conversation(red, ("count_notes", {}), colour) == ["1", "red"]  # red's process again
    assert len(_servers_running()) == 1  # the blue one, idle and of another configuration, was closed
