"""Promptfoo provider: the production agent in a conversation (see agent_evals.provider).

    providers:
      - id: file://../../providers/agent.py
        config: {agent: my-agent, pack: generic, mode: conversation, max_turns: 15}
"""

from agent_evals.provider.run import call_api

__all__ = ["call_api"]
