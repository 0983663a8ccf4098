"""``agent-evals check <suite|all>``: every problem of a run found before it spends anything.

:func:`preflight` loads each suite the way Promptfoo will and lists every problem at once,
one line each (file, line, what is wrong, what would be right): generated cases out of sync
with their templates and table (or templates and table that make no valid cases), YAML errors, the provider
config, each test's user and limits, every kit assertion's config (by the check's own
parser), tool names against the agent's tools, sources against the seed data, metrics,
cassettes for a replay (present and not stale), the agents' stdio MCP servers (each started
once, its tools listed, and stopped: a missing command, an early exit, a filtered tool it lacks),
and for a live run each role's model (and, unless ``offline``, one cheap request to it) and an
external portal. It is also the first step of ``agent-evals run``. Nothing else is started,
created or called on the model besides those pings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agent_evals.cases import check_suite
from agent_evals.llm.types import Role
from agent_evals.preflight.case_files import unlisted_case_files
from agent_evals.preflight.live_checks import check_external_portal, check_models, check_prices
from agent_evals.suites.problems import Problem
from agent_evals.preflight.replay_checks import check_cassettes, replay_folder
from agent_evals.preflight.server_checks import check_servers
from agent_evals.preflight.suite_checks import ProviderPlan, check_tests, needs_judge, needs_user_model, provider_plans
from agent_evals.suites.promptfoo_args import Flags, select, shared_output
from agent_evals.suites.files import SuiteFileError, TestEntry, load_suite
from agent_evals.suites.discovery import Suite
from agent_evals.judge import judge_configured
from agent_evals.provider.deadline import DeadlineError, configured_deadline_s

__all__ = ["Preflight", "Problem", "preflight"]


@dataclass
class Preflight:
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # worth knowing, not in the way (e.g. --offline without a model)
    selected: dict[str, list[TestEntry] | None] = field(default_factory=dict)  # None: unknown ahead

    @property
    def ok(self) -> bool:
        return not self.problems

    def cases(self, suite: str) -> int | None:
        chosen = self.selected.get(suite)
        return None if chosen is None else len(chosen)


def preflight(
    suites: list[Suite],
    flags: Flags,
    *,
    replay: str | None = None,
    offline: bool = False,
    allow_stale: bool = False,
    budget: bool = False,
    on_files_ok: Callable[[], object] | None = None,
) -> Preflight:
    """Every check of the suites before a run. ``on_files_ok`` is called once the suites' files, tests
    and cassettes are found sound, before the slow part (the models asked, the agents' servers
    started): the runner starts its warm server then, so that its start overlaps them."""
    result = Preflight()
    roles: list[tuple[Role, str | None, str | None]] = []
    all_plans: list[ProviderPlan] = []
    for suite in suites:
        result.problems += [Problem(None, line) for line in check_suite(suite)]
        try:
            loaded = load_suite(suite, lenient=True)
        except SuiteFileError as exc:
            result.problems.append(Problem(exc.where, exc.detail))
            result.selected[suite.name] = None
            continue
        result.problems += [Problem(exc.where, exc.detail) for exc in loaded.errors]
        result.problems += unlisted_case_files(loaded)
        plans = provider_plans(loaded, result.problems)
        all_plans += plans
        chosen = select(loaded.tests, flags)
        result.selected[suite.name] = chosen
        tests = loaded.tests if chosen is None else chosen
        check_tests(tests, plans, result.problems, suite.folder)
        if replay:
            folder = replay_folder(loaded, replay)
            result.problems += check_cassettes(loaded, tests, plans, folder, allow_stale=allow_stale, repeat=flags.repeat)
        elif tests:
            roles += _roles(plans, tests)
    if flags.filtered and all(c is not None and not c for c in result.selected.values()) and result.selected:
        result.problems.append(Problem(None, f"the filters select no case in {_names(suites)}: {_filters(flags)}"))
    running = [name for name, chosen in result.selected.items() if chosen is None or chosen]
    if (shared := shared_output(flags, running)) is not None:
        result.problems.append(Problem(None, shared))
    if on_files_ok is not None and result.ok:
        on_files_ok()
    unpriced = check_prices(dict.fromkeys(roles)) if budget and not replay else []
    result.problems += unpriced  # before any request: a budget needs a price for every model
    if not replay and not unpriced:
        result.problems += check_models(dict.fromkeys(roles), offline=offline, notes=result.notes)
    result.problems += check_servers(all_plans, result.notes)  # replays run the agent's servers too
    result.problems += _deadline_problems()
    result.problems += check_external_portal()
    return result


def _deadline_problems() -> list[Problem]:
    try:
        configured_deadline_s()
    except DeadlineError as exc:
        return [Problem(None, str(exc))]
    return []


def _roles(plans: list, tests: list[TestEntry]) -> list[tuple[Role, str | None, str | None]]:
    roles: list[tuple[Role, str | None, str | None]] = []
    for plan in plans:
        default = plan.agent.model if plan.agent is not None else None
        roles.append(("agent", plan.config.get("model"), default))
        if needs_user_model(tests, [plan]):
            roles.append(("user", plan.config.get("user_model"), None))
    if needs_judge(tests) and judge_configured():
        roles.append(("judge", None, None))
    return roles


def _names(suites: list[Suite]) -> str:
    return "suite " + suites[0].name if len(suites) == 1 else f"any of {len(suites)} suites"


def _filters(flags: Flags) -> str:
    parts = [f"--filter-metadata {k}={v}" for k, v in flags.metadata]
    if flags.pattern is not None:
        parts.append(f"--filter-pattern {flags.pattern!r}")
    if flags.range is not None:
        parts.append(f"--filter-range {flags.range[0] or ''}:{flags.range[1] or ''}")
    if flags.first_n is not None:
        parts.append(f"-n {flags.first_n}")
    note = " (a metadata filter is a substring match on the test's own metadata)" if flags.metadata else ""
    return " ".join(parts) + note
