"""The production agent's own errors (both are run-record :class:`~agent_evals.record.KitError`\\ s):

* :class:`AgentConfigError` (kind ``config``): an agent name, ``agent.yaml``, an override, a server
  entry or one of its ``${…}`` variables is wrong, or a server lacks a tool the agent's filter names;
* :class:`ServerUnavailable` (kind ``system``): one of the agent's MCP servers could not be started
  or reached, refused the session, or stopped during the conversation.

The model's own mistakes and failing tools are not errors: they reach the model as tool results.
``LLMError`` / ``LLMConfigError`` (``agent_evals.llm``) say the model could not be reached.
"""

from __future__ import annotations

from agent_evals.record import KitError

__all__ = ["AgentConfigError", "ServerUnavailable"]


class AgentConfigError(KitError, ValueError):
    """An agent name, configuration file or override is wrong; the message says what (kind ``config``)."""

    kind = "config"


class ServerUnavailable(KitError, RuntimeError):
    """An MCP server of the agent could not be started or reached, refused the session, or stopped
    (kind ``system``); the message names the server (and, for a stdio server, its stderr's last line)."""

    kind = "system"
