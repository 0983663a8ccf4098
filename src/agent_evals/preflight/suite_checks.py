"""Static checks of one suite: providers, users, limits, assertion configs, tool names, sources.

Everything here runs offline and fast: no portal, no model. Each problem says where it was
written and what would be right.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_evals.agent.config import AgentConfig, AgentConfigError, load_agent_config
from agent_evals.agent.mcp_servers import HttpServer
from agent_evals.assertions._config import ConfigError
from agent_evals.assertions.names import is_glob, name_matches
from agent_evals.assertions.registry import JUDGED_CHECKS, KitCheckError, check_name, pack_checks, pack_of, parse_check_config
from agent_evals.judge import MODEL_GRADED_TYPES
from agent_evals.packs import Pack, PackError, load_pack
from agent_evals.preflight.offline_tools import portal_tool_specs
from agent_evals.suites.problems import Problem, did_you_mean
from agent_evals.provider.config import ProviderConfig, ProviderConfigError, parse_config
from agent_evals.provider.promptfoo_assertions import assertion_problems
from agent_evals.suites.files import LoadedSuite, ProviderEntry, TestEntry
from agent_evals.agent.factory import load_factory
from agent_evals.provider.fixtures import references

KIT_PROVIDER = "providers/agent.py"
PORTAL_URL = "${PORTAL_URL}"


@dataclass
class ProviderPlan:
    """One of the kit's providers in a suite, resolved as far as can be done offline."""

    entry: ProviderEntry
    config: dict[str, Any]  # with basePath, as Promptfoo passes it
    agent: AgentConfig | None  # None for a team's own factory, or when the agent is wrong
    pack: Pack | None

    @property
    def label(self) -> str:
        return self.entry.label or self.entry.id

    @property
    def offered(self) -> list[str] | None:
        """The tools the agent is offered (None when unknown: a team's own factory)."""
        return list(self.agent.tools) if self.agent is not None else None


def is_kit_provider(entry: ProviderEntry) -> bool:
    return entry.id.removeprefix("file://").split(":")[0].endswith(KIT_PROVIDER)


def provider_plans(loaded: LoadedSuite, problems: list[Problem]) -> list[ProviderPlan]:
    plans = []
    for entry in loaded.providers:
        if not is_kit_provider(entry):
            continue
        config = {**entry.config, "basePath": str(loaded.suite.folder)}
        plans.append(ProviderPlan(entry, config, _agent(entry, config, loaded, problems), _pack(entry, config, problems)))
    if not plans:
        problems.append(Problem(str(loaded.suite.config), f"no provider is the kit's {KIT_PROVIDER}; nothing to check"))
    return plans


def _agent(entry: ProviderEntry, config: dict[str, Any], loaded: LoadedSuite, problems: list[Problem]) -> AgentConfig | None:
    if config.get("factory"):
        return None
    try:
        base = ProviderConfig.model_validate({k: v for k, v in config.items() if k not in _TEST_KEYS})
    except Exception:  # noqa: BLE001 - the per-test parse below reports the config problem once per test
        return None
    instructions = str(base.resolve(base.instructions_file)) if base.instructions_file else None
    try:
        agent = load_agent_config(base.agent, instructions_file=instructions, temperature=base.temperature,
                                  max_tool_rounds=base.max_tool_rounds)
    except AgentConfigError as exc:
        problems.append(Problem(entry.where, f"provider {entry.label or entry.id}: {exc}"))
        return None
    known = portal_tool_specs()
    for name in portal_server_tools(agent):
        if name not in known:
            problems.append(Problem(entry.where, f"provider {entry.label or entry.id}: agent {agent.name!r} allows "
                                                 f"tool {name!r}, which the portal does not offer"
                                                 + did_you_mean(name, sorted(known))))
    return agent


_TEST_KEYS = ("simulated_user", "user_messages")


def portal_server_tools(agent: AgentConfig) -> list[str]:
    """The filtered tools of the agent's servers at the portal the runner starts (``url: ${PORTAL_URL}…``):
    the ones the portal's catalog can check offline (other servers are checked live: ``server_checks``)."""
    return [tool for server in agent.servers if isinstance(server, HttpServer) and server.url.startswith(PORTAL_URL)
            for tool in server.tools or ()]


def _pack(entry: ProviderEntry, config: dict[str, Any], problems: list[Problem]) -> Pack | None:
    try:
        pack = load_pack(str(config.get("pack") or "generic"))
        pack_checks(pack)  # its checks' names: none may shadow a core check
        return pack
    except (PackError, KitCheckError) as exc:
        problems.append(Problem(entry.where, f"provider {entry.label or entry.id}: {exc}"))
        return None


def check_tests(tests: list[TestEntry], plans: list[ProviderPlan], problems: list[Problem], base: Path) -> None:
    """Each test's id, user and assertions; ``base`` is the suite's folder (what ``file://`` is relative to)."""
    ids = Counter(t.case_id for t in tests if t.case_id)
    seen_defaults: set[str] = set()
    for test in tests:
        label = test.case_id or test.description[:40] or "a test"
        if not test.case_id:
            problems.append(Problem(test.where, f"{label}: no metadata.id (the case id the report and cassettes use)"))
        elif ids[test.case_id] > 1:
            problems.append(Problem(test.where, f"{label}: case id {test.case_id} is used by {ids[test.case_id]} tests"))
        for plan in plans:
            _check_user(test, plan, label, problems)
        first_own = len(test.asserts) - test.own_asserts
        for position, item in enumerate(test.asserts):
            where = test.assert_where[position] if position < len(test.assert_where) else test.where
            for message in _assertion_problems(item, position, plans, base):
                if position < first_own:  # a defaultTest assertion: said once, not once per test
                    text = f"defaultTest {message}"
                    if text in seen_defaults:
                        continue
                    seen_defaults.add(text)
                else:
                    text = f"{label}: {message}"
                problems.append(Problem(where, text))


def _check_user(test: TestEntry, plan: ProviderPlan, label: str, problems: list[Problem]) -> None:
    try:
        config = parse_config(plan.config, test.vars, env={})
    except ProviderConfigError as exc:
        problems.append(Problem(test.where, f"{label}: {exc}"))
        return
    if plan.pack is not None:
        problems.extend(Problem(test.where, f"{label}: {p}") for p in plan.pack.fixture_problems(config.fixtures))
        problems.extend(Problem(test.where, f"{label}: {p}") for p in _reference_problems(config, test))
    if config.simulated_user is not None and config.simulated_user.class_:
        try:
            load_factory(config.simulated_user.class_)
        except AgentConfigError as exc:
            problems.append(Problem(test.where, f"{label}: {str(exc).replace('factory', 'simulator class', 1)}"))


def _reference_problems(config: ProviderConfig, test: TestEntry) -> list[str]:
    """Each ``$fixture.<key>.<field>`` of the user's definition and of the kit checks' configs must
    name one of the case's fixtures."""
    user = config.simulated_user.model_dump() if config.simulated_user is not None else config.user_messages
    checks = [item.get("config") for item in test.asserts if check_name(item)]
    keys = {key for item in config.fixtures or [] if isinstance(item, Mapping)
            for spec in item.values() if isinstance(spec, Mapping) and isinstance(key := spec.get("key"), str)}
    out = []
    for ref in dict.fromkeys([*references(user), *references(checks)]):
        key = ref.split(".")[1]
        if key not in keys:
            out.append(f"{ref}: the case has no fixture with key {key!r} (keys: {', '.join(sorted(keys)) or 'none'})")
    return out


def _assertion_problems(item: Mapping[str, Any], position: int, plans: list[ProviderPlan], base: Path) -> list[str]:
    kind = str(item.get("type") or "")
    # a kit check of the core, a built-in pack or a suite's own pack (named by a dotted path too)
    named = next(((found, pack) for pack in [*(plan.pack for plan in plans), None]
                  if (found := check_name(item, pack)) is not None), None)
    name, its_pack = named if named is not None else (None, None)
    head = f"assertion {position + 1} ({name or kind or 'no type'})"
    out = [f"{head}: {p}" for p in assertion_problems(item, base)]
    if not item.get("metric"):
        out.append(f"{head}: no metric; add `metric: <name>` so its score has a name in the viewer and the report")
    if name is None:  # Promptfoo's own, or a team's own Python assertion: Promptfoo checks those
        return out
    try:
        config = parse_check_config(name, item.get("config"), its_pack)
    except ConfigError as exc:
        return [*out, f"{head}: invalid config: {exc}"]
    except KitCheckError as exc:
        return [*out, f"{head}: {exc}"]
    for plan in plans:
        owner = pack_of(name, plan.pack)
        if plan.pack is not None and owner is not None and owner != plan.pack.name:
            out.append(f"{head}: a check of the {owner} pack; this suite's pack is {plan.pack.name} (provider config pack:)")
            continue
        out += [f"{head}: {p}" for p in _tool_name_problems(name, config, plan)]
        if plan.pack is not None:
            out += [f"{head}: {p}" for p in plan.pack.preflight(name, config)]
    return list(dict.fromkeys(out))


def _tool_name_problems(name: str, config: Any, plan: ProviderPlan) -> list[str]:
    """Tools the case expects the agent to call must be offered to it; tools it names otherwise
    (forbidden, ignored, the submitting tool) must exist on the portal."""
    offered = plan.offered
    # what exists: the tools of the suite's system (every built-in system's when it names none) and the agent's
    system_tools = (plan.pack.system.offered_tools() if plan.pack is not None else None) or portal_tool_specs()
    portal = sorted({*system_tools, *(offered or ())})
    expected, existing = _names(name, config)
    out = []
    for tool in expected:
        known = offered if offered is not None else portal
        if not any(name_matches(t, tool) for t in known):
            whose = f"agent {plan.agent.name!r} is offered" if plan.agent is not None else "the portal offers"
            glob = "matches none of the tools " if is_glob(tool) else "is not one of the tools "
            out.append(f"tool {tool!r} {glob}{whose} ({', '.join(known)}){did_you_mean(tool, known)}")
    for tool in existing:
        if not any(name_matches(t, tool) for t in portal):
            out.append(f"tool {tool!r} matches no portal tool ({', '.join(portal)}){did_you_mean(tool, portal)}")
    return out


def _names(name: str, config: Any) -> tuple[list[str], list[str]]:
    """(tools the agent must be able to call, tools that must merely exist)."""
    if name == "tool_sequence":
        return list(config.expected), list(config.ignore)
    if name == "tool_not_executed":
        return [], list(config.tools)
    if name == "argument_match":
        return [config.tool], []
    if name == "function_call_metrics":
        return [c.name for c in config.expected_calls], list(config.ignore)
    if name == "tool_order":
        return [], [tool for rule in config.rules for tool in (rule.before, rule.then)]
    if name == "repeated_calls":
        return [], list(config.ignore)
    tool = getattr(config, "tool", None)
    return [], [tool] if isinstance(tool, str) else []


def needs_judge(tests: list[TestEntry]) -> bool:
    """A model-graded assertion, a judged kit check, or a conversation case with a goal (its
    goal_reached is judged for information) asks the judge."""
    for test in tests:
        user = test.vars.get("simulated_user")
        if isinstance(user, Mapping) and isinstance(user.get("goal"), str) and user["goal"].strip():
            return True
    return has_judged_checks(tests)


def has_judged_checks(tests: list[TestEntry]) -> bool:
    """A model-graded assertion or a judged kit check that decides a row (not the informative
    goal_reached every conversation with a goal gets)."""
    return any(
        str(item.get("type", "")).removeprefix("not-") in MODEL_GRADED_TYPES or check_name(item) in JUDGED_CHECKS
        for test in tests
        for item in test.asserts
    )


def needs_user_model(tests: list[TestEntry], plans: list[ProviderPlan]) -> bool:
    for plan in plans:
        for test in tests:
            try:
                config = parse_config(plan.config, test.vars, env={})
            except ProviderConfigError:
                continue
            if config.mode == "conversation" and config.simulated_user is not None and not config.simulated_user.class_:
                return True
    return False


# the same checks of one assertion, for a live policy's checks (agent_evals.live.policy)
suite_assertion_problems = _assertion_problems
tool_name_problems = _tool_name_problems
