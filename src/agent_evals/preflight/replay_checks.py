"""Before a replay: the folder exists, every selected case has its cassette, and none is stale.

Staleness is computed offline from the same fingerprints the cassettes keep: the case and
its user from the test, the agent's from its configuration and the portal's tool
definitions (for the kit's own agent factory; a team's factory is checked at replay).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_evals.conversation.cassette import CassetteError, cassette_filename, load_cassette
from agent_evals.conversation.fingerprints import agent_fingerprint, differences
from agent_evals.preflight.offline_tools import portal_tool_specs
from agent_evals.suites.problems import Problem
from agent_evals.preflight.suite_checks import ProviderPlan
from agent_evals.provider.config import ProviderConfigError, parse_config
from agent_evals.provider.modes import GOLDEN
from agent_evals.provider.run import fingerprints
from agent_evals.suites.files import LoadedSuite, TestEntry, render_prompt


def replay_folder(loaded: LoadedSuite, replay: str) -> Path:
    """``--replay`` (golden) is the suite's golden/ folder; ``--replay DIR`` is DIR/<suite>."""
    return loaded.suite.folder / GOLDEN if replay == GOLDEN else Path(replay).resolve() / loaded.suite.name


def check_cassettes(
    loaded: LoadedSuite, tests: list[TestEntry], plans: list[ProviderPlan], folder: Path, *, allow_stale: bool,
    repeat: int = 1,
) -> list[Problem]:
    if not folder.is_dir():
        how = (f"write its golden plan, then record it: `npx agent-evals golden {loaded.suite.name}`"
               if folder.name == GOLDEN and folder.parent == loaded.suite.folder else
               f"record one with `npm run eval -- {loaded.suite.name} --record {folder.parent}`, or use --replay "
               "for the golden conversations")
        return [Problem(None, f"{loaded.suite.name}: replay folder {folder} does not exist ({how})")]
    problems: list[Problem] = []
    for plan in plans:
        variant = plan.config.get("variant")
        for test in tests:
            for r in range(repeat):
                problems += _check_one(loaded, test, plan, folder, variant, r, allow_stale)
    return problems


def _check_one(
    loaded: LoadedSuite, test: TestEntry, plan: ProviderPlan, folder: Path, variant: Any, repeat: int, allow_stale: bool
) -> list[Problem]:
    path = folder / cassette_filename(test.case_id, variant=variant, repeat=repeat)
    if repeat and not path.is_file():
        return []  # this repeat shares the case's cassette, checked with repeat 0
    if not path.is_file() and folder == loaded.suite.folder / GOLDEN:
        return [Problem(test.where, f"{test.case_id}: no golden conversation ({GOLDEN}/{path.name}): add the case to "
                                    f"{GOLDEN}/plan.yaml, then record it: `npx agent-evals golden {loaded.suite.name} "
                                    "--stale`")]
    try:
        cassette = load_cassette(path)
    except CassetteError as exc:
        return [Problem(test.where, f"{test.case_id}: {exc}")]
    changed = _changes(loaded, test, plan, cassette.fingerprints)
    if changed and not allow_stale:
        return [Problem(test.where, f"{test.case_id}: cassette {path.name} is stale: {'; '.join(changed)}; re-record "
                                    f"it (`npx agent-evals golden {loaded.suite.name} --stale` for golden conversations) "
                                    "or replay it with --allow-stale")]
    return []


def _changes(loaded: LoadedSuite, test: TestEntry, plan: ProviderPlan, recorded: dict[str, Any]) -> list[str]:
    if not recorded:
        return []  # upgraded from an older format: nothing to compare with
    try:
        config = parse_config(plan.config, test.vars, env={})
    except ProviderConfigError:
        return []  # reported by the suite checks
    prompt = render_prompt(loaded.prompts[0], test.vars) if loaded.prompts else ""
    current = fingerprints(config, test.case_id, prompt)
    out = differences("case", recorded.get("case"), current["case"]) + differences("user", recorded.get("user"), current["user"])
    agent = expected_agent_fingerprint(plan)
    if agent is not None:
        out += differences("agent", recorded.get("agent"), agent)
    return out


def expected_agent_fingerprint(plan: ProviderPlan) -> dict[str, Any] | None:
    """What the kit's agent will show its model on the first call (None for a team's factory, and for an
    agent offered tools the portal's catalog does not describe: those of its other MCP servers)."""
    if plan.agent is None:
        return None
    specs = portal_tool_specs()
    if any(name not in specs for name in plan.agent.tools):
        return None
    tools = [specs[name] for name in plan.agent.tools]
    return agent_fingerprint([{"role": "system", "content": plan.agent.instructions}], tools, plan.agent.temperature)
