"""Before a run: every stdio MCP server of the suites' agents starts and offers the tools its filter names.

For each kit agent of the suites (once per agent configuration), each stdio server (``command:`` in
``agent.yaml``) is started with the variables its pack's system makes up for the check (the release
pack: a seed repository as ``${REPO}``, removed after) and then the environment's, its tools are
listed and the session is closed again. A command that is missing or not executable, a server that exits at
start (with the last line of its stderr) and a filter naming a tool the server lacks are problems,
found before anything is spent; a tool in the filters of two servers is already refused when
``agent.yaml`` is read (``suite_checks``). A server that names a variable the environment does not
set yet and the system does not make up (one the runner sets when it starts the system) is a note,
not a problem: the agent checks it again when it opens. HTTP servers are not contacted here (an external portal is checked by
``live_checks.check_external_portal``; the runner's own is started after the check).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from pathlib import Path

from agent_evals.agent.config import AgentConfig
from agent_evals.agent.errors import AgentConfigError, ServerUnavailable
from agent_evals.agent.mcp_servers import McpServer, StdioServer, resolve_servers
from agent_evals.agent.mcp_session import McpSession
from agent_evals.suites.problems import Problem
from agent_evals.preflight.suite_checks import ProviderPlan

__all__ = ["check_servers"]


def check_servers(
    plans: Iterable[ProviderPlan], notes: list[str], *, environ: Mapping[str, str] | None = None
) -> list[Problem]:
    """Start each stdio server of the plans' agents once; one problem per server that fails."""
    environ = os.environ if environ is None else environ
    agents: dict[Path, tuple[ProviderPlan, AgentConfig]] = {}
    for plan in plans:
        if plan.agent is not None:
            agents.setdefault(plan.agent.config_file, (plan, plan.agent))
    started: list[tuple[ProviderPlan, AgentConfig, McpServer]] = []
    with ExitStack() as stack:
        made_up: dict[int, Mapping[str, str]] = {}  # by system: one stand-in per system, whatever its agents
        for plan, agent in agents.values():
            stdio = [server for server in agent.servers if isinstance(server, StdioServer)]
            if not stdio:
                continue
            system = plan.pack.system if plan.pack is not None else None
            if system is not None and id(system) not in made_up:
                made_up[id(system)] = stack.enter_context(system.preflight_variables())
            variables = made_up.get(id(system), {})
            for server in stdio:
                try:
                    started += [(plan, agent, s) for s in resolve_servers(agent.name, [server], variables,
                                                                           environ=environ, base_dir=agent.folder)]
                except AgentConfigError as exc:
                    notes.append(f"{exc}; not started by the check (the agent checks it when it opens)")
        if not started:
            return []
        failures = asyncio.run(_open_all([server for _, _, server in started]))
    return [
        Problem(plan.entry.where, f"provider {plan.label}: agent {agent.name!r}: {failure}")
        for (plan, agent, _), failure in zip(started, failures, strict=True)
        if failure is not None
    ]


async def _open_all(servers: list[McpServer]) -> list[str | None]:
    return list(await asyncio.gather(*(_open(server) for server in servers)))


async def _open(server: McpServer) -> str | None:
    """None when the server starts and has every filtered tool; else what is wrong, in one line."""
    try:
        async with McpSession(server):
            return None
    except (ServerUnavailable, AgentConfigError) as exc:
        return " ".join(str(exc).split())
