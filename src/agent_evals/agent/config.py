"""Agent configurations: ``agent_config/agents/<name>/agent.yaml`` plus instructions.

```yaml
description: Turns a developer's request into a spoke configuration pull request.
model: gpt-4.1            # model or Azure deployment; AGENT_MODEL or an override wins
temperature: 0.2
instructions: instructions.md   # relative to the agent's folder
servers:                  # the MCP servers it uses, as MCP clients configure them (``mcp_servers``)
  portal:
    url: ${PORTAL_URL}/mcp/
    headers: {Authorization: "Bearer ${PORTAL_TOKEN:-}"}
    tools: [list_spokes, get_spoke, ...]   # the tools of this server the agent may call
max_tool_rounds: 12       # model replies with tool calls per user turn, at most
max_tokens: 2048          # optional: completion cap of each model reply (1..32768);
                          # LLM_MAX_TOKENS_AGENT or the provider's max_tokens wins
```

The top-level ``tools:`` list of earlier versions is refused with a line saying how to write it
now (under a server).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_evals.agent.errors import AgentConfigError
from agent_evals.agent.mcp_servers import McpServer, parse_servers
from agent_evals.llm.caps import MAX_TOKENS_LIMIT
from agent_evals.paths import agent_config_dir
from agent_evals.validation_errors import describe

__all__ = ["AgentConfig", "AgentConfigError", "AgentFile", "available_agents", "load_agent_config", "read_agent_config"]

_AGENT_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class AgentFile(BaseModel):
    """The schema of ``agent.yaml``."""

    model_config = ConfigDict(extra="forbid")

    description: str = Field(min_length=1)
    model: str = Field(min_length=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    instructions: str = Field(min_length=1)
    servers: dict[str, Any] = Field(min_length=1)  # each entry is read by ``mcp_servers.parse_servers``
    max_tool_rounds: int = Field(default=10, ge=1, le=50)
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS_LIMIT)


@dataclass(frozen=True)
class AgentConfig:
    """A resolved agent configuration, overrides applied."""

    name: str
    description: str
    model: str
    temperature: float | None
    instructions: str
    instructions_file: Path
    servers: tuple[McpServer, ...]  # as written: ``${…}`` not expanded yet (``mcp_servers.resolve_servers``)
    max_tool_rounds: int
    config_file: Path = Path()
    max_tokens: int | None = None
    """The completion cap ``agent.yaml`` asks for (None: the role's default, docs/llm.md)."""

    @property
    def tools(self) -> tuple[str, ...]:
        """Every tool the agent may call, server by server, in the order ``agent.yaml`` lists them."""
        return tuple(tool for server in self.servers for tool in server.tools or ())

    @property
    def folder(self) -> Path:
        """The agent's folder (a server's relative ``cwd`` starts there)."""
        return self.config_file.parent

    @property
    def instructions_sha256(self) -> str:
        return hashlib.sha256(self.instructions.encode("utf-8")).hexdigest()


def available_agents(config_dir: Path | None = None) -> list[str]:
    root = config_dir or agent_config_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "agent.yaml").is_file())


def load_agent_config(*args: Any, **kwargs: Any) -> AgentConfig:
    """Read ``<config_dir>/<name>/agent.yaml`` and apply the overrides (see :func:`read_agent_config`).

    A worker loads the same configuration for every conversation: the result is kept per
    arguments, the folder the agents are read from and the files' modification times, so an edited
    file, or another project's folder, is read again.
    """
    key = (args, tuple(sorted(kwargs.items())), None if kwargs.get("config_dir") else agent_config_dir())
    try:
        cached = _CACHE.get(key)
        if cached is not None and cached[0] == _stamps(cached[1]):
            return cached[1]
    except TypeError:  # unhashable arguments: no cache
        return read_agent_config(*args, **kwargs)
    config = read_agent_config(*args, **kwargs)
    _CACHE[key] = (_stamps(config), config)
    return config


_CACHE: dict[Any, tuple[tuple[float, ...], AgentConfig]] = {}


def _stamps(config: AgentConfig) -> tuple[float, ...]:
    paths = (config.instructions_file, config.config_file)
    return tuple(p.stat().st_mtime if p.exists() else -1.0 for p in paths)


DEFAULT_AGENT = "spoke"  # the portal's agent when a suite names none


def read_agent_config(
    name: str | None,
    *,
    config_dir: Path | None = None,
    instructions_file: str | Path | None = None,
    model: str | None = None,
    temperature: float | None = None,
    max_tool_rounds: int | None = None,
) -> AgentConfig:
    """Read ``<config_dir>/<name>/agent.yaml`` and apply the overrides.

    ``instructions_file`` may be absolute or relative to the working directory;
    the file named in ``agent.yaml`` is relative to the agent's folder.
    """
    root = config_dir or agent_config_dir()
    name = DEFAULT_AGENT if name is None else name
    if not isinstance(name, str) or not _AGENT_NAME.match(name):
        raise AgentConfigError(f"invalid agent name {name!r}: use lower-case letters, digits, '-' or '_'")
    folder = root / name
    path = folder / "agent.yaml"
    if not path.is_file():
        known = ", ".join(available_agents(root)) or "none"
        raise AgentConfigError(f"unknown agent {name!r}: no {path} (agents: {known})")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise AgentConfigError(f"{path} is not valid YAML: {exc}") from exc
    if isinstance(raw, dict) and "tools" in raw:
        raise AgentConfigError(f"{path}: {OLD_TOOLS_FORM}")
    try:
        spec = AgentFile.model_validate(raw)
        servers = parse_servers(spec.servers)
    except ValidationError as exc:
        raise AgentConfigError(f"{path} is invalid: {describe(exc)}") from exc
    except AgentConfigError as exc:
        raise AgentConfigError(f"{path} is invalid: {exc}") from exc

    chosen = Path(instructions_file) if instructions_file is not None else folder / spec.instructions
    instructions = _read_instructions(chosen)
    if temperature is not None and not 0.0 <= float(temperature) <= 2.0:
        raise AgentConfigError(f"temperature override {temperature!r} is out of range 0..2")
    if max_tool_rounds is not None and not 1 <= int(max_tool_rounds) <= 50:
        raise AgentConfigError(f"max_tool_rounds override {max_tool_rounds!r} is out of range 1..50")
    return AgentConfig(
        name=name,
        description=spec.description,
        model=model or spec.model,
        temperature=float(temperature) if temperature is not None else spec.temperature,
        instructions=instructions,
        instructions_file=chosen.resolve(),
        servers=servers,
        max_tool_rounds=int(max_tool_rounds) if max_tool_rounds is not None else spec.max_tool_rounds,
        config_file=path.resolve(),
        max_tokens=spec.max_tokens,
    )


OLD_TOOLS_FORM = (
    "the top-level `tools:` list is no longer read: the tools belong to the MCP server that offers them. "
    "Write `servers: {portal: {url: \"${PORTAL_URL}/mcp/\", headers: {Authorization: \"Bearer ${PORTAL_TOKEN:-}\"}, "
    "tools: [<the same list>]}}` instead (docs/agent.md)"
)


def _read_instructions(path: Path) -> str:
    if not path.is_file():
        raise AgentConfigError(f"instructions file {path} does not exist")
    text = path.read_text(encoding="utf-8").strip()
    if not text:
        raise AgentConfigError(f"instructions file {path} is empty")
    return text
