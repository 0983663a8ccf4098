"""The MCP servers an agent uses, written as MCP clients configure them (``servers:`` in ``agent.yaml``).

```yaml
servers:
  portal:                                   # streamable HTTP: url (+ headers)
    url: ${PORTAL_URL}/mcp/
    headers:
      Authorization: Bearer ${PORTAL_TOKEN:-}
    tools: [list_spokes, get_spoke]         # the tools of this server the agent may call, in this order
  git:                                      # stdio: command (+ args, env, cwd), started by the agent
    command: mcp-server-git
    args: [--repository, "${REPO}"]
    env: {GIT_AUTHOR_NAME: agent}
    cwd: .                                  # relative to the agent's folder
    lifetime: worker                        # kept for the worker's life (default: conversation)
    tools: [git_status, git_log]
```

A stdio server's ``lifetime`` says how long its process lives: ``conversation`` (the default: started
for each conversation and stopped at its end) or ``worker`` (started by a worker's first conversation
and kept for the worker's later ones while its resolved configuration is the same:
:mod:`agent_evals.agent.worker_sessions`). ``worker`` suits a server that keeps no state of a
conversation in its process (its files are the system's, which resets them between conversations);
it saves the server's start (about 0.7 s of ``mcp-server-git``) on every conversation but a worker's first.

A server is stdio when it has ``command``, streamable HTTP when it has ``url`` (an optional
``type: stdio|http`` must agree). Values (``command``, ``args``, ``env`` values, ``cwd``, ``url``,
header values) may name variables: ``${NAME}``, or ``${NAME:-default}`` (the default also when
the value is empty); ``$$`` is a literal ``$``. A variable comes from the ``variables`` given to
:func:`resolve_servers` first, then the process environment; ``${AGENT_EVALS_HOME}`` is the
project's folder when the environment does not set it (a server the project installs:
``command: ${AGENT_EVALS_HOME}/.venv/bin/mcp-server-git``, whatever launched the agent). One that
is unset and has no default is an :class:`AgentConfigError` naming the agent, the server, the
field and the variable. A **header** is not sent when its value is empty after expansion, or when a variable
it names is empty: ``Authorization: Bearer ${PORTAL_TOKEN:-}`` sends no ``Authorization``
without a token.

:class:`StdioServer` and :class:`HttpServer` are both the server as written and, after
:func:`resolve_servers`, as it will be started. Their ``repr`` shows no ``env`` or header
values and no URL query or user info: secrets belong there (not in ``args``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_evals.agent.errors import AgentConfigError
from agent_evals.paths import HOME_VARIABLE, project_root
from agent_evals.validation_errors import describe

__all__ = [
    "HttpServer",
    "McpServer",
    "StdioServer",
    "expand",
    "parse_servers",
    "resolve_servers",
    "shown_url",
]

Lifetime = Literal["conversation", "worker"]
_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_REFERENCE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\{")


@dataclass(frozen=True, repr=False)
class StdioServer:
    """A server the agent starts as a process and talks to over its stdin/stdout."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    tools: tuple[str, ...] | None = None  # the tool filter; None: every tool the server offers
    lifetime: Lifetime = "conversation"
    transport: Literal["stdio"] = "stdio"

    def __repr__(self) -> str:
        lifetime = f", lifetime={self.lifetime!r}" if self.lifetime != "conversation" else ""
        return (f"StdioServer(name={self.name!r}, command={self.command!r}, args={list(self.args)!r}, "
                f"env={sorted(self.env)!r}, cwd={self.cwd!r}, tools={_tools(self.tools)}{lifetime})")

    @property
    def identity(self) -> tuple[object, ...]:
        """What makes two resolved servers the same process: a kept session serves only its own."""
        return (self.command, self.args, tuple(sorted(self.env.items())), self.cwd, self.tools)


@dataclass(frozen=True, repr=False)
class HttpServer:
    """A server the agent reaches over streamable HTTP."""

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    tools: tuple[str, ...] | None = None
    header_variables: tuple[str, ...] = ()  # the variables the headers name (a refused session says to check them)
    transport: Literal["http"] = "http"

    def __repr__(self) -> str:
        return (f"HttpServer(name={self.name!r}, url={shown_url(self.url)!r}, headers={sorted(self.headers)!r}, "
                f"tools={_tools(self.tools)})")


McpServer = StdioServer | HttpServer


def shown_url(url: str) -> str:
    """``url`` without user info, query or fragment: what messages and reprs show of it."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<an invalid URL>"
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _tools(tools: tuple[str, ...] | None) -> str:
    return "all" if tools is None else repr(list(tools))


# -- agent.yaml ----------------------------------------------------------------------------------
class _StdioFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["stdio"] | None = None
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = Field(default=None, min_length=1)
    lifetime: Lifetime = "conversation"
    tools: list[str] = Field(min_length=1)


class _HttpFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["http"] | None = None
    url: str = Field(min_length=1)
    headers: dict[str, str] = Field(default_factory=dict)
    tools: list[str] = Field(min_length=1)


def parse_servers(raw: Any) -> tuple[McpServer, ...]:
    """``servers:`` of ``agent.yaml`` (a mapping name → server) as written; the tool filters are
    checked here: a tool named twice, or by two servers, is refused."""
    if not isinstance(raw, Mapping) or not raw:
        raise AgentConfigError(
            "servers must map each server's name to {command, args, env, cwd, lifetime, tools} (stdio) or "
            "{url, headers, tools} (streamable HTTP)"
        )
    servers = tuple(_parse_one(str(name), entry) for name, entry in raw.items())
    _check_filters(servers)
    return servers


def _parse_one(name: str, entry: Any) -> McpServer:
    if not _SERVER_NAME.match(name):
        raise AgentConfigError(f"server name {name!r}: use letters, digits, '-' or '_' (at most 64)")
    if not isinstance(entry, Mapping):
        raise AgentConfigError(f"server {name!r} is a {type(entry).__name__}, not a mapping")
    kind = "stdio" if "command" in entry else "http" if "url" in entry else None
    if kind is None or ("command" in entry and "url" in entry):
        raise AgentConfigError(
            f"server {name!r}: give either `command` (a stdio server the agent starts) or `url` "
            "(a streamable HTTP server), not both or neither"
        )
    try:
        if kind == "stdio":
            spec = _StdioFile.model_validate(entry)
            return StdioServer(name, spec.command, tuple(spec.args), dict(spec.env), spec.cwd, tuple(spec.tools),
                               spec.lifetime)
        http = _HttpFile.model_validate(entry)
        return HttpServer(name, http.url, dict(http.headers), tuple(http.tools))
    except ValidationError as exc:
        raise AgentConfigError(f"server {name!r} ({kind}) is invalid: {describe(exc)}") from exc


def _check_filters(servers: Sequence[McpServer]) -> None:
    owner: dict[str, str] = {}
    for server in servers:
        for tool, count in Counter(server.tools or ()).items():
            if count > 1:
                raise AgentConfigError(f"server {server.name!r} lists tool {tool!r} {count} times in its `tools`")
            if tool in owner:
                raise AgentConfigError(
                    f"tool {tool!r} is in the `tools` of both servers {owner[tool]!r} and {server.name!r}: the "
                    "model would not know which one it calls; keep it in one of them"
                )
            owner[tool] = server.name


# -- variables -----------------------------------------------------------------------------------
Lookup = Callable[[str], str | None]


def expand(text: str, lookup: Lookup, *, where: str) -> tuple[str, bool]:
    """``text`` with its ``${…}`` references replaced; also whether a variable expanded to ``""``.
    ``where`` names the value in errors (``server 'git': args[1]``)."""
    empty = False

    def one(match: re.Match[str]) -> str:
        nonlocal empty
        if match.group(0) == "$$":
            return "$"
        name, default = match.group(1), match.group(2)
        if name is None:
            raise AgentConfigError(
                f"{where}: {text[match.start():match.start() + 20]!r}… is not a variable reference: write "
                "${NAME} or ${NAME:-default} ($$ for a literal $)"
            )
        value = lookup(name)
        if not value and default is not None:
            value = default
        if value is None:
            raise AgentConfigError(
                f"{where} names ${{{name}}}, which is not set: set it (or give the agent a value for it), or "
                f"give a default as ${{{name}:-default}}"
            )
        empty = empty or value == ""
        return value

    return _REFERENCE.sub(one, text), empty


def resolve_servers(
    agent: str,
    servers: Sequence[McpServer],
    variables: Mapping[str, str] | None = None,
    *,
    environ: Mapping[str, str],
    base_dir: Path,
    headers: Mapping[str, str] | None = None,
) -> tuple[McpServer, ...]:
    """``servers`` as they will be started: variables expanded (``variables`` first, then ``environ``),
    a relative ``cwd`` made absolute from ``base_dir`` (the agent's folder), empty headers dropped
    and ``headers`` (the trace headers) added to every HTTP server, winning over its own."""
    given = dict(variables or {})

    def lookup(name: str) -> str | None:
        if name in given:
            return given[name]
        return environ[name] if name in environ else (str(project_root()) if name == HOME_VARIABLE else None)

    return tuple(_resolve_one(agent, server, lookup, base_dir, dict(headers or {})) for server in servers)


def _resolve_one(agent: str, server: McpServer, lookup: Lookup, base_dir: Path, trace: dict[str, str]) -> McpServer:
    where = f"agent {agent!r}, server {server.name!r}:"
    if isinstance(server, StdioServer):
        cwd = expand(server.cwd, lookup, where=f"{where} cwd")[0] if server.cwd is not None else None
        return replace(
            server,
            command=expand(server.command, lookup, where=f"{where} command")[0],
            args=tuple(expand(a, lookup, where=f"{where} args[{i}]")[0] for i, a in enumerate(server.args)),
            env={k: expand(v, lookup, where=f"{where} env.{k}")[0] for k, v in server.env.items()},
            cwd=str(base_dir / cwd) if cwd is not None else None,
        )
    sent: dict[str, str] = {}
    for key, template in server.headers.items():
        value, empty = expand(template, lookup, where=f"{where} headers.{key}")
        if value.strip() and not empty:
            sent[key] = value
    named = tuple(dict.fromkeys(m.group(1) for t in server.headers.values() for m in _REFERENCE.finditer(t) if m.group(1)))
    url = _single_slashes(expand(server.url, lookup, where=f"{where} url")[0])
    if urlsplit(url).scheme not in ("http", "https"):
        raise AgentConfigError(f"{where} url {shown_url(url)!r} is not an http(s) URL")
    return replace(server, url=url, headers={**sent, **trace}, header_variables=named)


def _single_slashes(url: str) -> str:
    """``${BASE}/mcp/`` with a ``BASE`` that ends with ``/`` would ask for ``//mcp/``: one ``/`` between segments."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=re.sub(r"/{2,}", "/", parts.path)))
