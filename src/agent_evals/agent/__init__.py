"""The production agent: configurations, the factory, the tool-calling loop and its MCP session.

* :func:`create_agent` — build an agent from ``agent_config/agents/<name>/`` (``factory``);
* :class:`ConversationalAgent` — the small interface every agent offers, yours too (``types``);
* :class:`AgentReply`, :class:`ToolCall` — what one turn produces (``types``);
* :func:`run_turn` — the loop itself (``loop``); :class:`PortalTools` — one MCP session (``portal_tools``);
* ``agent_evals.agent.chat_api`` — ``POST /api/agents/{name}/chat`` for the portal (not imported here).

Errors: :class:`AgentConfigError` for a wrong agent name, configuration or override;
:class:`PortalUnavailable` when the portal cannot be reached; ``LLMError`` /
``LLMConfigError`` (from ``agent_evals.llm``) when the model cannot. Errors the model
should see (bad arguments, unknown tools, failing tools) are tool results, not exceptions.
See ``docs/agent.md``.
"""

from agent_evals.agent.config import AgentConfig, AgentConfigError, available_agents, load_agent_config
from agent_evals.agent.factory import Agent, create_agent, load_factory
from agent_evals.agent.loop import run_turn
from agent_evals.agent.portal_tools import PortalConnection, PortalTools, PortalUnavailable
from agent_evals.agent.types import AgentReply, ConversationalAgent, StopReason, ToolCall, ToolResult

__all__ = [
    "Agent",
    "AgentConfig",
    "AgentConfigError",
    "AgentReply",
    "ConversationalAgent",
    "PortalConnection",
    "PortalTools",
    "PortalUnavailable",
    "StopReason",
    "ToolCall",
    "ToolResult",
    "available_agents",
    "create_agent",
    "load_agent_config",
    "load_factory",
    "run_turn",
]
