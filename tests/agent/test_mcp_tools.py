"""The agent over several MCP servers: the live portal (streamable HTTP) and a stdio server it starts
(``notes_server.py``), with the real openai client against the scripted model."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_evals.agent.errors import AgentConfigError, ServerUnavailable
from agent_evals.agent.factory import create_agent
from agent_evals.agent.loop import ToolExecutor
from agent_evals.agent.mcp_servers import StdioServer
from agent_evals.agent.mcp_tools import McpTools
from agent_evals.agent.types import AgentReply, ToolResult
from agent_evals.llm.types import ToolSpec
from agent_evals.record import ToolCall
from agent_evals.testing.scripted_openai import Reply, ScriptedOpenAIServer

from .conftest import Script

NOTES = Path(__file__).with_name("notes_server.py")
SECRET = "notes-secret-4242"
AGENT_YAML = """\
description: An agent with two servers.
model: m
instructions: i.md
servers:
  portal:
    url: ${PORTAL_URL}/mcp/
    headers: {Authorization: "Bearer ${PORTAL_TOKEN:-}"}
    tools: [get_spoke, list_spokes]
  notes:
    command: ${PYTHON}
    args: ["${NOTES_SERVER}"]
    env: {NOTES_SECRET: "${NOTES_SECRET:-}"%s}
    tools: [%s]
"""


def agents(root: Path, *, tools: str = "add_note, echo_env", env: str = "") -> Path:
    (root / "two").mkdir(parents=True)
    (root / "two" / "agent.yaml").write_text(AGENT_YAML % (env, tools))
    (root / "two" / "i.md").write_text("Use your tools.")
    return root


VARIABLES = {"PYTHON": sys.executable, "NOTES_SERVER": str(NOTES), "NOTES_SECRET": SECRET}


class _NoModel:
    model = "none"

    async def complete(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no model call before the servers are up")


class Seen:
    """A ``wrap_tools`` wrapper that sees every executed call and its result (as replay's does)."""

    def __init__(self) -> None:
        self.results: list[tuple[str, ToolResult]] = []

    def __call__(self, inner: ToolExecutor) -> ToolExecutor:
        seen = self

        class Wrapped:
            @property
            def specs(self) -> list[ToolSpec]:
                return inner.specs

            async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
                result = await inner.call(name, arguments)
                seen.results.append((name, result))
                return result

        return Wrapped()


def converse(root: Path, *messages: str, **options: Any) -> tuple[list[AgentReply], list[ToolCall]]:
    calls: list[ToolCall] = []

    async def go() -> list[AgentReply]:
        history: list[Any] = []
        replies = []
        async with create_agent("two", config_dir=root, **options) as agent:
            for message in messages:
                history.append({"role": "user", "content": message})
                reply = await agent.respond(history, on_tool_call=calls.append)
                history += reply.messages
                replies.append(reply)
        return replies

    return asyncio.run(go()), calls


def test_the_model_sees_one_tool_list_and_each_call_names_its_server(
    kit_env: dict[str, str], script: Script, scripted_llm: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    script([
        Reply.tool_calls([("get_spoke", {"name": "crm-dev-neu"}), ("add_note", {"text": "seen crm-dev-neu"}),
                          ("echo_env", {"name": "NOTES_SECRET"}), ("count_notes", {})]),
        "Noted.",
    ])
    wrapper = Seen()
    (reply,), _ = converse(agents(tmp_path), "note it", variables=VARIABLES, wrap_tools=wrapper)
    request = scripted_llm.requests[0]
    assert request.tool_names == ["get_spoke", "list_spokes", "add_note", "echo_env"]  # the filters, in order
    spoke, note, env, count = reply.tool_calls
    assert (spoke.server, spoke.outcome, spoke.result["config"]["name"]) == ("portal", "ok", "crm-dev-neu")
    assert (note.server, note.outcome, note.result) == ("notes", "ok", {"result": ["seen crm-dev-neu"]})
    assert (env.server, env.result) == ("notes", {"result": SECRET})  # env reached the server, expanded
    assert (count.server, count.outcome) == (None, "refused")  # the server has it, the filter does not
    assert [(name, result.server) for name, result in wrapper.results] == [
        ("get_spoke", "portal"), ("add_note", "notes"), ("echo_env", "notes")
    ]  # wrap_tools sees every server's calls


def test_a_stdio_server_lives_for_the_whole_conversation(kit_env: dict[str, str], script: Script, tmp_path: Path) -> None:
    script([Reply.tool_calls([("add_note", {"text": "one"})]), "first",
            Reply.tool_calls([("add_note", {"text": "two"})]), "second"])
    (_, second), _ = converse(agents(tmp_path), "one", "two", variables=VARIABLES)
    assert second.tool_calls[0].result == {"result": ["one", "two"]}  # the same process kept the first note


def test_a_missing_variable_is_a_config_error_naming_agent_server_and_variable(
    kit_env: dict[str, str], tmp_path: Path
) -> None:
    with pytest.raises(AgentConfigError, match=r"agent 'two', server 'notes': command names \$\{PYTHON\}, which is not set"):
        create_agent("two", config_dir=agents(tmp_path), chat_model=_NoModel(), variables={})


def test_a_filter_naming_a_tool_the_server_lacks(kit_env: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(AgentConfigError, match=(
        r"the tool filter of MCP server 'notes' names teleport, which the server does not offer "
        r"\(its tools: add_note, count_notes, echo_env, stop_server\)"
    )):
        converse(agents(tmp_path, tools="add_note, teleport"), "hi", variables=VARIABLES, chat_model=_NoModel())


def test_a_tool_two_servers_offer_is_refused_at_start_naming_both() -> None:
    twins = [StdioServer(name, sys.executable, (str(NOTES),)) for name in ("notes", "more-notes")]  # no filters

    async def go() -> None:
        async with McpTools(twins):
            pass

    with pytest.raises(AgentConfigError, match="tool 'add_note' is offered by both MCP servers 'notes' and 'more-notes'"):
        asyncio.run(go())


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"PYTHON": "/no/such/python"}, "MCP server 'notes' (python) could not be started: command '/no/such/python' "
                                        "not found (not a file, nor on PATH)"),
        ({"PYTHON": "no-such-command-4242"}, "could not be started: command 'no-such-command-4242' not found (not a "
                                             "file, nor on PATH)"),
        ({"PYTHON": str(NOTES)}, f"could not be started: command '{NOTES}' is not executable"),
    ],
    ids=["missing-path", "not-on-path", "not-executable"],
)
def test_a_server_that_cannot_be_started(
    kit_env: dict[str, str], tmp_path: Path, variables: dict[str, str], message: str
) -> None:
    with pytest.raises(ServerUnavailable) as caught:
        converse(agents(tmp_path), "hi", variables={**VARIABLES, **variables}, chat_model=_NoModel())
    assert str(caught.value).endswith(message) and caught.value.kind == "system"  # no stderr: nothing ran


def test_a_server_that_exits_at_start_names_its_stderr_last_line(kit_env: dict[str, str], tmp_path: Path) -> None:
    root = agents(tmp_path, env=', NOTES_EXIT_AT_START: "no repository at /nowhere"')
    with pytest.raises(ServerUnavailable) as caught:
        converse(root, "hi", variables=VARIABLES, chat_model=_NoModel())  # before any model call
    assert str(caught.value) == (
        f"MCP server 'notes' ({Path(sys.executable).name}) exited at start; the last line of its stderr: notes: fatal: "
        "no repository at /nowhere"
    )
    assert caught.value.kind == "system" and SECRET not in str(caught.value)


def test_a_server_that_dies_mid_conversation_ends_the_turn(
    kit_env: dict[str, str], script: Script, tmp_path: Path
) -> None:
    script([Reply.tool_calls([("add_note", {"text": "kept"})]), Reply.tool_calls([("stop_server", {})]), "never"])
    with pytest.raises(ServerUnavailable) as caught:  # one clear error, not an ExceptionGroup or CancelledError
        converse(agents(tmp_path, tools="add_note, stop_server"), "hi", variables=VARIABLES)
    assert str(caught.value).startswith(
        f"MCP server 'notes' ({Path(sys.executable).name}) stopped during the conversation (calling stop_server); "
        "the last line of its stderr: notes: stopping on request"
    )
    assert caught.value.kind == "system"


def test_a_third_party_stdio_server(tmp_path: Path) -> None:
    """mcp-server-git (PyPI), as a team would list it: started, its tools filtered, a call answered."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "notes.txt").write_text("one\n")
    git = StdioServer("git", str(Path(sys.executable).with_name("mcp-server-git")), ("--repository", str(tmp_path)),
                      tools=("git_status", "git_log"))

    async def go() -> tuple[list[str], ToolResult]:
        async with McpTools([git]) as tools:
            return tools.names, await tools.call("git_status", {"repo_path": str(tmp_path)})

    names, status = asyncio.run(go())
    assert names == ["git_status", "git_log"]
    assert (status.server, status.is_error) == ("git", False) and "notes.txt" in status.text
