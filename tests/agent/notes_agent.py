"""The factory of the test agent ``notes`` (``tests/agent/agents/notes``: the portal and ``notes_server.py``),
for the providers' ``factory:`` option; the environment gives ``NOTES_PYTHON`` and ``NOTES_SERVER``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_evals.agent.factory import Agent
from agent_evals.agent.factory import create_agent as create_kit_agent

AGENTS = Path(__file__).with_name("agents")
SERVER = Path(__file__).with_name("notes_server.py")


def create_agent(name: str | None, **options: Any) -> Agent:
    return create_kit_agent(name or "notes", config_dir=AGENTS, **options)
