"""The production agent factory.

```python
from agent_evals.agent.factory import create_agent

async with create_agent("spoke", temperature=0.0) as agent:
    reply = await agent.respond([{"role": "user", "content": "Copy payments-dev-weu for team X"}])
    print(reply.text, [c.name for c in reply.tool_calls], reply.usage.total_tokens)
```

``create_agent`` reads ``agent_config/agents/<name>/agent.yaml``, applies the
overrides (instructions file, model, temperature, max_tool_rounds, max_tokens), asks ``models``
(a :class:`~agent_evals.llm.source.ModelSource`; default: the environment's endpoint
and ``AGENT_MODEL``) for the ``agent`` role's chat model unless ``chat_model`` is given,
and resolves the agent's MCP servers (``servers:`` in ``agent.yaml``): their ``${…}`` variables
from ``variables``, then the environment (an unset one without a default is an
``AgentConfigError`` naming the agent, server and variable, raised here, before any model call).
Every model request carries the agent's completion cap: ``max_tokens``, else
``LLM_MAX_TOKENS_AGENT``, else ``agent.yaml``'s ``max_tokens``, else 2048 (docs/llm.md).
``headers`` are sent with every request to every HTTP server (``X-Eval-Id``, ``X-Test-Id``,
``X-Created-By``); ``wrap_tools`` may wrap the tool executor (replay checks each tool result
through it, whichever server answered).

The agent is an async context manager: entering it opens one MCP session per server (starting
the stdio servers' processes), kept for every ``respond`` until it is left; a server that cannot
be started or reached raises ``ServerUnavailable`` (kind ``system``). ``respond(history)`` runs
one user turn (:func:`agent_evals.agent.loop.run_turn`) over the servers' tools as one list.

Your own agent: write a function with the same keyword arguments that returns an
object following :class:`agent_evals.agent.types.ConversationalAgent` and give the
providers its dotted path (``factory: mypackage.agents:create_agent``). The providers
call it as ``factory(name, instructions_file=, model=, temperature=, max_tool_rounds=,
models=, wrap_tools=, headers=)``, plus ``max_tokens=`` when the provider config sets it; arguments it does not use it may ignore (take
``**kwargs``), but ``models`` is where it must get its chat model (that is how a run is
recorded, replayed and metered), and ``headers`` is how the pull requests it creates
are traced to a test. See ``docs/agent.md``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self, cast

from agent_evals.agent.config import AgentConfig, AgentConfigError, load_agent_config
from agent_evals.agent.loop import ToolExecutor, run_turn
from agent_evals.agent.mcp_servers import McpServer, resolve_servers
from agent_evals.agent.mcp_tools import McpTools
from agent_evals.agent.types import AgentReply, ConversationalAgent, ToolObserver
from agent_evals.llm.caps import max_tokens_for, with_max_tokens
from agent_evals.llm.source import LiveModels, ModelSource
from agent_evals.llm.types import ChatModel, Message, ToolSpec
from agent_evals.record import AgentInfo

AgentFactory = Callable[..., ConversationalAgent]
ToolWrapper = Callable[[ToolExecutor], ToolExecutor]


class Agent:
    """A production agent: its configuration, its chat model and its MCP servers (``servers``: resolved,
    see :func:`~agent_evals.agent.mcp_servers.resolve_servers`), one session each while it is open."""

    def __init__(
        self,
        config: AgentConfig,
        model: ChatModel,
        servers: Sequence[McpServer] = (),
        *,
        owns_model: bool = False,
        wrap_tools: ToolWrapper | None = None,
    ) -> None:
        self.config = config
        self.model = model
        self.servers = tuple(servers)
        self._owns_model = owns_model
        self._wrap_tools = wrap_tools
        self._session: McpTools | None = None
        self._tools: ToolExecutor | None = None

    @property
    def info(self) -> AgentInfo:
        return AgentInfo(
            name=self.config.name,
            model=self.model.model,
            temperature=self.config.temperature,
            instructions_sha256=self.config.instructions_sha256,
        )

    async def __aenter__(self) -> Self:
        if self._session is not None:
            raise RuntimeError(f"agent {self.config.name!r} is already open")
        session = McpTools(self.servers)
        try:
            await session.__aenter__()
        except BaseException:
            if self._owns_model:
                await close_model(self.model)
            raise
        self._session = session
        self._tools = self._wrap_tools(session) if self._wrap_tools is not None else session
        return self

    @property
    def tool_specs(self) -> list[ToolSpec]:
        """The tools offered to the model (empty until the agent is open)."""
        return list(self._tools.specs) if self._tools is not None else []

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        session, self._session, self._tools = self._session, None, None
        try:
            if session is not None:
                await session.__aexit__(exc_type, exc, tb)
        finally:
            if self._owns_model:
                await close_model(self.model)

    async def respond(self, history: Sequence[Message], *, on_tool_call: ToolObserver | None = None) -> AgentReply:
        if self._tools is None:
            raise RuntimeError("the agent is not open; use `async with create_agent(...) as agent`")
        return await run_turn(
            model=self.model,
            tools=self._tools,
            system_prompt=self.config.instructions,
            history=history,
            temperature=self.config.temperature,
            max_tool_rounds=self.config.max_tool_rounds,
            on_tool_call=on_tool_call,
        )


def create_agent(
    name: str | None = None,
    *,
    instructions_file: str | Path | None = None,
    model: str | None = None,
    temperature: float | None = None,
    max_tool_rounds: int | None = None,
    max_tokens: int | None = None,
    models: ModelSource | None = None,
    chat_model: ChatModel | None = None,
    wrap_tools: ToolWrapper | None = None,
    variables: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    config_dir: Path | None = None,
) -> Agent:
    """Build the production agent ``name`` (the portal's default agent when None; see the module docstring)."""
    config = load_agent_config(
        name,
        config_dir=config_dir,
        instructions_file=instructions_file,
        model=None,
        temperature=temperature,
        max_tool_rounds=max_tool_rounds,
    )
    servers = resolve_servers(
        config.name, config.servers, variables, environ=os.environ, base_dir=config.folder, headers=headers
    )
    cap = max_tokens_for("agent", max_tokens=max_tokens, default_max_tokens=config.max_tokens, setting="max_tokens")
    owns_model = chat_model is None
    if chat_model is None:
        chat_model = (models or LiveModels()).chat_model("agent", model=model, default_model=config.model)
    capped = with_max_tokens(chat_model, cap)
    return Agent(config, capped, servers, owns_model=owns_model, wrap_tools=wrap_tools)


async def close_model(model: Any) -> None:
    """Close a chat model's HTTP client if it has one (``aclose``)."""
    closer = getattr(model, "aclose", None)
    if closer is not None:
        await closer()


def load_factory(dotted: str) -> AgentFactory:
    """Resolve ``package.module:function`` (or ``package.module.function``) to a factory."""
    module_name, sep, attr = dotted.partition(":")
    if not sep:
        module_name, _, attr = dotted.rpartition(".")
    if not module_name or not attr:
        raise AgentConfigError(f"factory {dotted!r} is not a dotted path like 'package.module:create_agent'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AgentConfigError(f"factory {dotted!r}: cannot import {module_name!r}: {exc}") from exc
    factory: object = getattr(module, attr, None)
    if not callable(factory):
        raise AgentConfigError(f"factory {dotted!r}: {module_name!r} has no callable {attr!r}")
    return cast(AgentFactory, factory)
