"""What an eval is, in one line, for the viewer's eval list (Promptfoo's ``--description``):

    tickets-create · replay · agent golden-agent, user golden-user, judge none · rev abc1234 · instructions 1d23b9c2

The suite, how it ran (live, replay, record), the model of each role, the git revision and the
hash of the agent's instructions, so a replay and a live run of another model are told apart;
and, when no judge grades the suite's model-graded assertions, that they are NOT GRADED.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_evals.record import KitError
from agent_evals.suites.discovery import Suite
from agent_evals.llm.settings import resolve_model
from agent_evals.suites.files import load_suite

if TYPE_CHECKING:
    from agent_evals.agent.config import AgentConfig


def eval_description(suite: Suite, mode: str, git_revision: str | None) -> str:
    agents = _agents(suite)
    parts = [suite.name, mode, _models(agents, mode)]
    if git_revision:
        parts.append(f"rev {git_revision}")
    hashes = _instructions(agents)
    if hashes:
        parts.append("instructions " + ", ".join(hashes))
    if _ungraded(suite):
        parts.append("model-graded checks NOT GRADED (no judge)")
    return " · ".join(parts)


def _ungraded(suite: Suite) -> bool:
    """The suite has model-graded checks that decide rows, and no judge model will grade them
    (the informative goal_reached of a conversation decides nothing: it is not named here)."""
    from agent_evals.judge import judge_configured  # lazy: keeps agent_evals.golden.record's start-up as small as it is
    from agent_evals.preflight.suite_checks import has_judged_checks  # lazy: loads pydantic only when used (start-up time)

    try:
        return not judge_configured() and has_judged_checks(load_suite(suite).tests)
    except KitError:
        return False


def _agents(suite: Suite) -> list[tuple[dict[str, Any], AgentConfig | None]]:
    from agent_evals.agent.config import load_agent_config  # lazy: loads pydantic only when used (start-up time)
    from agent_evals.preflight.suite_checks import is_kit_provider  # lazy: loads pydantic only when used (start-up time)
    from agent_evals.provider.config import ProviderConfig  # lazy: loads pydantic only when used (start-up time)

    out: list[tuple[dict[str, Any], AgentConfig | None]] = []
    try:
        providers = [p for p in load_suite(suite).providers if is_kit_provider(p)]
    except KitError:
        return []
    for provider in providers:
        config = {**provider.config, "basePath": str(suite.folder)}
        try:
            base = ProviderConfig.model_validate({k: v for k, v in config.items()
                                                  if k not in ("simulated_user", "user_messages")})
            agent = None if base.factory else load_agent_config(
                base.agent, instructions_file=str(base.resolve(base.instructions_file)) if base.instructions_file
                else None)
        except (KitError, ValueError):
            continue
        out.append((config, agent))
    return out


def _models(agents: list[tuple[dict[str, Any], AgentConfig | None]], mode: str) -> str:
    from agent_evals.judge import judge_configured  # lazy: keeps agent_evals.golden.record's start-up as small as it is

    if mode == "replay":
        return "models as recorded"
    config, agent = agents[0] if agents else ({}, None)
    default = getattr(agent, "model", None)
    agent_model = resolve_model("agent", model=config.get("model"), default_model=default)[0] or "?"
    user_model = resolve_model("user", model=config.get("user_model"))[0] or agent_model
    judge = resolve_model("judge")[0] if judge_configured() else "none"
    return f"agent {agent_model}, user {user_model}, judge {judge}"


def _instructions(agents: list[tuple[dict[str, Any], AgentConfig | None]]) -> list[str]:
    return list(dict.fromkeys(a.instructions_sha256[:8] for _, a in agents if a is not None))
