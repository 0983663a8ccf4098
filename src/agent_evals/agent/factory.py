"""The production agent factory.

```python
from agent_evals.agent.factory import create_agent

async with create_agent("spoke", temperature=0.0) as agent:
    reply = await agent.respond([{"role": "user", "content": "Copy dev-weu-payments for team X"}])
    print(reply.text, [c.name for c in reply.tool_calls])
```

``create_agent`` reads ``agent_config/agents/<name>/agent.yaml``, applies the
overrides (instructions file, model, temperature), picks the chat model for the
``agent`` role from the environment (``AGENT_MODEL`` and the endpoint variables)
unless one is given, and connects to the portal named by ``PORTAL_URL`` unless a
connection is given.

Your own agent: write a function with the same keyword arguments that returns
an object following ``agent_evals.agent.types.ConversationalAgent`` and give the
providers its dotted path (``factory: mypackage.agents:create_agent``). Arguments
it does not know it may ignore; ``chat_model`` is how replay hands it recorded
model responses.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from agent_evals.agent.config import AgentConfig, AgentConfigError, load_agent_config
from agent_evals.agent.loop import run_turn
from agent_evals.agent.portal_tools import PortalConnection, PortalTools
from agent_evals.agent.types import AgentReply, ConversationalAgent
from agent_evals.contract import AgentInfo
from agent_evals.llm.types import ChatModel, Message

AgentFactory = Callable[..., ConversationalAgent]


class Agent:
    """A production agent: its configuration, its chat model and one MCP session."""

    def __init__(
        self, config: AgentConfig, model: ChatModel, connection: PortalConnection, *, owns_model: bool = False
    ) -> None:
        self.config = config
        self.model = model
        self._connection = connection
        self._owns_model = owns_model
        self._tools: PortalTools | None = None

    @property
    def info(self) -> AgentInfo:
        return {
            "name": self.config.name,
            "model": self.model.model,
            "temperature": self.config.temperature,
            "instructions_sha256": self.config.instructions_sha256,
        }

    async def __aenter__(self) -> Agent:
        tools = PortalTools(self._connection, allowed=self.config.tools)
        await tools.__aenter__()
        self._tools = tools
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        tools, self._tools = self._tools, None
        try:
            if tools is not None:
                await tools.__aexit__(exc_type, exc, tb)
        finally:
            if self._owns_model:
                await close_model(self.model)

    async def respond(self, history: Sequence[Message]) -> AgentReply:
        if self._tools is None:
            raise RuntimeError("the agent is not open; use `async with create_agent(...) as agent`")
        return await run_turn(
            model=self.model,
            tools=self._tools,
            system_prompt=self.config.instructions,
            history=history,
            temperature=self.config.temperature,
            max_tool_rounds=self.config.max_tool_rounds,
        )


def create_agent(
    name: str,
    *,
    instructions_file: str | Path | None = None,
    model: str | None = None,
    temperature: float | None = None,
    max_tool_rounds: int | None = None,
    chat_model: ChatModel | None = None,
    portal: PortalConnection | None = None,
    headers: Mapping[str, str] | None = None,
    config_dir: Path | None = None,
) -> Agent:
    """Build the production agent ``name`` (see the module docstring)."""
    config = load_agent_config(
        name,
        config_dir=config_dir,
        instructions_file=instructions_file,
        model=None,
        temperature=temperature,
        max_tool_rounds=max_tool_rounds,
    )
    owns_model = chat_model is None
    if chat_model is None:
        from agent_evals.llm.settings import chat_model as model_for_role

        chat_model = model_for_role("agent", model=model, default_model=config.model)
    connection = portal or PortalConnection.from_env(headers=headers)
    if portal is not None and headers:
        connection = PortalConnection(portal.url, portal.token, {**portal.headers, **headers})
    return Agent(config, chat_model, connection, owns_model=owns_model)


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
    factory: Any = getattr(module, attr, None)
    if not callable(factory):
        raise AgentConfigError(f"factory {dotted!r}: {module_name!r} has no callable {attr!r}")
    return factory
