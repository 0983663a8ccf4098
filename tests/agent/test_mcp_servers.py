"""The agent's MCP servers as agent.yaml writes them: parsing, the tool filters, ``${…}`` variables."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from agent_evals.agent.errors import AgentConfigError
from agent_evals.agent.mcp_servers import HttpServer, StdioServer, expand, parse_servers, resolve_servers

PORTAL = {"url": "${PORTAL_URL}/mcp/", "headers": {"Authorization": "Bearer ${PORTAL_TOKEN:-}"}, "tools": ["get_spoke"]}
GIT = {"command": "mcp-server-git", "args": ["--repository", "${REPO}"], "env": {"GIT_TOKEN": "${GIT_TOKEN:-none}"},
       "cwd": "work", "tools": ["git_status", "git_log"]}


def test_stdio_and_http_servers_as_mcp_clients_write_them() -> None:
    portal, git = parse_servers({"portal": PORTAL, "git": {**GIT, "type": "stdio"}})
    assert isinstance(portal, HttpServer) and isinstance(git, StdioServer)
    assert (portal.name, portal.url, dict(portal.headers), portal.tools) == (
        "portal", "${PORTAL_URL}/mcp/", {"Authorization": "Bearer ${PORTAL_TOKEN:-}"}, ("get_spoke",)
    )
    assert (git.command, git.args, dict(git.env), git.cwd, git.tools) == (
        "mcp-server-git", ("--repository", "${REPO}"), {"GIT_TOKEN": "${GIT_TOKEN:-none}"}, "work",
        ("git_status", "git_log"),
    )


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ({}, re.escape("servers must map each server's name to {command, args, env, cwd, lifetime, tools} (stdio) or {url, "
                       "headers, tools} (streamable HTTP)")),
        (["portal"], "servers must map each server's name"),
        ({"portal": "http://p"}, "server 'portal' is a str, not a mapping"),
        ({"bad name": PORTAL}, "server name 'bad name': use letters, digits, '-' or '_'"),
        ({"x": {"tools": ["a"]}}, re.escape("server 'x': give either `command` (a stdio server the agent starts) or "
                                            "`url` (a streamable HTTP server), not both or neither")),
        ({"x": {"command": "c", "url": "http://p", "tools": ["a"]}}, "server 'x': give either `command`"),
        ({"x": {"command": "c"}}, r"server 'x' \(stdio\) is invalid: tools: Field required"),
        ({"x": {"url": "http://p", "tools": []}}, r"server 'x' \(http\) is invalid: tools: List should have at least 1 item"),
        ({"x": {"url": "http://p", "tools": ["a"], "type": "stdio"}}, r"server 'x' \(http\) is invalid: type: Input should be 'http'"),
        ({"x": {"command": "c", "tools": ["a"], "headers": {}}}, r"server 'x' \(stdio\) is invalid: headers: Extra inputs"),
        ({"x": {"command": "c", "tools": ["a"], "args": "--flag"}}, r"server 'x' \(stdio\) is invalid: args: Input should be a valid list"),
        ({"x": {"command": "c", "tools": ["a", "b", "a"]}}, "server 'x' lists tool 'a' 2 times in its `tools`"),
        ({"x": {"command": "c", "tools": ["a"], "lifetime": "run"}},
         r"server 'x' \(stdio\) is invalid: lifetime: Input should be 'conversation' or 'worker'"),
        ({"x": {"url": "http://p", "tools": ["a"], "lifetime": "worker"}}, r"server 'x' \(http\) is invalid: lifetime: Extra inputs"),
        ({"x": {"command": "c", "tools": ["a", "b"]}, "y": {"url": "http://p", "tools": ["c", "b"]}},
         "tool 'b' is in the `tools` of both servers 'x' and 'y': the model would not know which one it calls"),
    ],
)
def test_bad_server_entries_are_named(servers: Any, message: str) -> None:
    with pytest.raises(AgentConfigError, match=message):
        parse_servers(servers)


def _resolve(servers: dict[str, Any], variables: dict[str, str] | None = None, environ: dict[str, str] | None = None,
             headers: dict[str, str] | None = None) -> tuple[Any, ...]:
    return resolve_servers("spoke", parse_servers(servers), variables, environ=environ or {},
                           base_dir=Path("/agents/spoke"), headers=headers)


def test_variables_come_from_the_given_values_first_then_the_environment() -> None:
    portal, git = _resolve({"portal": PORTAL, "git": GIT}, {"PORTAL_URL": "http://given:1", "REPO": "/r"},
                           {"PORTAL_URL": "http://env:2", "PORTAL_TOKEN": "tok-123", "GIT_TOKEN": "g"})
    assert (portal.url, dict(portal.headers)) == ("http://given:1/mcp/", {"Authorization": "Bearer tok-123"})
    assert (git.args, dict(git.env), git.cwd) == (("--repository", "/r"), {"GIT_TOKEN": "g"}, "/agents/spoke/work")
    assert portal.header_variables == ("PORTAL_TOKEN",)


@pytest.mark.parametrize(
    ("text", "values", "expanded"),
    [
        ("${A}", {"A": "x"}, "x"),
        ("a-${A}-${B}", {"A": "1", "B": "2"}, "a-1-2"),
        ("${A:-fallback}", {}, "fallback"),
        ("${A:-fallback}", {"A": ""}, "fallback"),  # the default also stands for an empty value
        ("${A:-}", {}, ""),
        ("${A}", {"A": ""}, ""),  # set but empty is not unset
        ("cost: $$5 and $HOME", {}, "cost: $5 and $HOME"),  # $$ is a $, a bare $NAME is text
    ],
)
def test_expansion(text: str, values: dict[str, str], expanded: str) -> None:
    assert expand(text, values.get, where="w")[0] == expanded


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ({"portal": PORTAL}, r"agent 'spoke', server 'portal': url names \$\{PORTAL_URL\}, which is not set: set it "
                             r"\(or give the agent a value for it\), or give a default as \$\{PORTAL_URL:-default\}"),
        ({"git": GIT}, r"agent 'spoke', server 'git': args\[1\] names \$\{REPO\}, which is not set"),
        ({"git": {"command": "${GIT_BIN}", "tools": ["a"]}}, r"server 'git': command names \$\{GIT_BIN\}"),
        ({"git": {"command": "c", "env": {"K": "${KEY}"}, "tools": ["a"]}}, r"server 'git': env.K names \$\{KEY\}"),
        ({"git": {"command": "c", "cwd": "${DIR}", "tools": ["a"]}}, r"server 'git': cwd names \$\{DIR\}"),
        ({"p": {"url": "http://h/", "headers": {"X-Key": "${KEY}"}, "tools": ["a"]}}, r"server 'p': headers.X-Key names"),
        ({"p": {"url": "http://h/${oops", "tools": ["a"]}}, r"server 'p': url: '\$\{oops'… is not a variable reference: "
                                                           r"write \$\{NAME\} or \$\{NAME:-default\}"),
        ({"p": {"url": "http://h/${1X}", "tools": ["a"]}}, r"is not a variable reference"),
        ({"p": {"url": "ftp://h/", "tools": ["a"]}}, r"agent 'spoke', server 'p': url 'ftp://h/' is not an http\(s\) URL"),
    ],
)
def test_bad_values_are_config_errors_naming_agent_server_field_and_variable(servers: dict[str, Any], message: str) -> None:
    with pytest.raises(AgentConfigError, match=message) as caught:
        _resolve(servers)
    assert caught.value.kind == "config"


@pytest.mark.parametrize(
    ("environ", "sent"),
    [
        ({"PORTAL_URL": "http://p", "PORTAL_TOKEN": "tok-1"}, {"Authorization": "Bearer tok-1"}),
        ({"PORTAL_URL": "http://p"}, {}),  # ${PORTAL_TOKEN:-} is empty: no "Bearer " header
        ({"PORTAL_URL": "http://p", "PORTAL_TOKEN": ""}, {}),
    ],
)
def test_a_header_whose_variable_is_empty_is_not_sent(environ: dict[str, str], sent: dict[str, str]) -> None:
    (portal,) = _resolve({"portal": PORTAL}, environ=environ)
    assert dict(portal.headers) == sent


def test_headers_without_variables_and_the_trace_headers() -> None:
    server = {"url": "http://p/mcp/", "headers": {"X-Team": "net", "X-Empty": " ", "X-Eval-Id": "mine"}, "tools": ["a"]}
    (portal,) = _resolve({"p": server}, headers={"X-Eval-Id": "run-1", "X-Test-Id": "T1"})
    assert dict(portal.headers) == {"X-Team": "net", "X-Eval-Id": "run-1", "X-Test-Id": "T1"}  # the trace's win
    (git,) = _resolve({"git": {"command": "c", "tools": ["a"]}}, headers={"X-Eval-Id": "run-1"})
    assert isinstance(git, StdioServer)  # a stdio server has no headers to send them with


def test_a_base_url_ending_with_a_slash_makes_no_double_slash() -> None:
    (portal,) = _resolve({"portal": PORTAL}, {"PORTAL_URL": "http://127.0.0.1:8400/"})
    assert portal.url == "http://127.0.0.1:8400/mcp/"


def test_secrets_stay_out_of_reprs() -> None:
    secret = "s3cr3t-value"
    portal, git = _resolve(
        {"portal": {**PORTAL, "url": "https://user:pw@h/mcp/?key=${PORTAL_TOKEN}"},
         "git": {**GIT, "env": {"GIT_TOKEN": "${PORTAL_TOKEN}"}}},
        {"PORTAL_URL": "http://p", "REPO": "/r", "PORTAL_TOKEN": secret},
    )
    shown = repr(portal) + repr(git) + repr((portal, git))
    assert secret not in shown and "pw" not in shown
    assert "headers=['Authorization']" in repr(portal) and "url='https://h/mcp/'" in repr(portal)
    assert "env=['GIT_TOKEN']" in repr(git) and "args=['--repository', '/r']" in repr(git)
