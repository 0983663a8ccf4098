"""The production agent: configurations, the factory, the tool-calling loop and its MCP servers.

* :func:`create_agent` — build an agent from ``agent_config/agents/<name>/`` (``factory``);
* :class:`ConversationalAgent` — the small interface every agent offers, yours too (``types``);
* :class:`AgentReply`, :class:`ToolCall` — what one turn produces (``types``);
* :func:`run_turn` — the loop itself (``loop``);
* :class:`StdioServer`, :class:`HttpServer` — the MCP servers ``agent.yaml`` lists, ``${…}`` variables
  and all (``mcp_servers``); :class:`McpSession` — one session to one of them (``mcp_session``);
  :class:`McpTools` — their tools as one list (``mcp_tools``);
* ``agent_evals.live.chat_api`` — ``POST /api/agents/{name}/chat`` for the portal (not imported here).

Errors (``errors``): :class:`AgentConfigError` for a wrong agent name, configuration, override,
server entry, unset variable or tool filter; :class:`ServerUnavailable` (kind ``system``) when an
MCP server cannot be started or reached or stops; ``LLMError`` / ``LLMConfigError`` (from
``agent_evals.llm``) when the model cannot. Errors the model should see (bad arguments, unknown
tools, failing tools) are tool results, not exceptions. See ``docs/agent.md``.
"""

from typing import TYPE_CHECKING

from agent_evals.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from agent_evals.agent.config import AgentConfig, available_agents, load_agent_config
    from agent_evals.agent.errors import AgentConfigError, ServerUnavailable
    from agent_evals.agent.factory import Agent, create_agent, load_factory
    from agent_evals.agent.loop import run_turn
    from agent_evals.agent.mcp_servers import HttpServer, McpServer, StdioServer, resolve_servers
    from agent_evals.agent.mcp_session import McpSession
    from agent_evals.agent.mcp_tools import McpTools
    from agent_evals.agent.types import AgentReply, ConversationalAgent, StopReason, ToolCall, ToolResult

__getattr__ = lazy_exports(__name__, {
    "AgentConfig": "config",
    "available_agents": "config",
    "load_agent_config": "config",
    "AgentConfigError": "errors",
    "ServerUnavailable": "errors",
    "Agent": "factory",
    "create_agent": "factory",
    "load_factory": "factory",
    "run_turn": "loop",
    "HttpServer": "mcp_servers",
    "McpServer": "mcp_servers",
    "StdioServer": "mcp_servers",
    "resolve_servers": "mcp_servers",
    "McpSession": "mcp_session",
    "McpTools": "mcp_tools",
    "AgentReply": "types",
    "ConversationalAgent": "types",
    "StopReason": "types",
    "ToolCall": "types",
    "ToolResult": "types",
})

__all__ = [
    "Agent",
    "AgentConfig",
    "AgentConfigError",
    "AgentReply",
    "ConversationalAgent",
    "HttpServer",
    "McpServer",
    "McpSession",
    "McpTools",
    "ServerUnavailable",
    "StdioServer",
    "StopReason",
    "ToolCall",
    "ToolResult",
    "available_agents",
    "create_agent",
    "load_agent_config",
    "load_factory",
    "resolve_servers",
    "run_turn",
]
