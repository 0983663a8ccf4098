"""The spoke pack's system under test: the portal (:mod:`agent_evals.system` for the protocol).

- run scope: the portal a suite runs against, started, shared or external (:mod:`.runs`), its
  environment (``PORTAL_URL``, ``PORTAL_TOKEN``), undo by eval id (:mod:`.undo`), ``agent-evals
  cleanup`` and the sweep of runs that died (:mod:`.sweeps`);
- conversation scope: the trace headers the portal records on what a conversation makes
  (``X-Eval-Id``, ``X-Test-Id``), pull requests as side effects (those ``create_spoke_pull_request``
  made, and those the portal recorded with the conversation's test id), fixtures (:mod:`.fixtures`),
  the end-state snapshot (:mod:`.snapshot`: the pull requests with their diffs, the portal's
  schema, each ``input_diff`` source) and the undo of one conversation.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_evals.packs.spoke.created_prs import created_pull_requests, pull_request
from agent_evals.authoring import (
    COLD,
    Conversation,
    FixtureError,
    KitStarter,
    Running,
    RunRecord,
    SideEffect,
    Snapshot,
    System,
    SystemPool,
    ToolCall,
    Trace,
)
from agent_evals.packs.spoke.seeds import seed_spoke_names

if TYPE_CHECKING:
    from agent_evals.authoring import CheckRef, Suite, ToolSpec
    from agent_evals.packs.spoke.portal.api import PortalAPI

log = logging.getLogger(__name__)

PR_CREATING_TOOLS = frozenset({"create_spoke_pull_request"})
_PR_URL = re.compile(r"/pullrequest/(\d+)\b")


class PortalSystem(System):
    """The portal, as the core sees it."""

    name = "portal"
    undo_words = "abandoning this run's pull requests"
    left_words = "pull requests"
    stop_words = "the portal abandons them as it stops"

    # -- run scope

    server_modules = ("agent_evals.packs.spoke.portal.server",)  # `agent-evals portal serve`'s
    worker_modules = (  # what a worker imports for a row: its fixtures, end state, undo
        "agent_evals.packs.spoke.fixtures", "agent_evals.packs.spoke.snapshot", "agent_evals.packs.spoke.undo",
    )

    def pool(
        self, run_id: str, log_folder: Path, suites: Sequence[Suite], *, starter: KitStarter = COLD
    ) -> SystemPool:
        from agent_evals.packs.spoke.runs import PortalPool  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        return PortalPool(run_id, log_folder, suites, starter=starter)

    def attach(self, env: Mapping[str, str] | None = None) -> Running | None:
        from agent_evals.packs.spoke.runs import from_env  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        return from_env(os.environ if env is None else env)

    def start_plain(self, suite: Suite, *, owner_pid: int, run_id: str) -> dict[str, Any]:
        from agent_evals.packs.spoke.runs import start_plain  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        return start_plain(suite, owner_pid, run_id)

    def clean(self, *, url: str | None, data_dir: Path | None, eval_id: str | None, alive: set[str]) -> int | None:
        from agent_evals.packs.spoke.sweeps import clean  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is
        from agent_evals.authoring import runs_dir  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        return clean(runs_dir(), url=url, data_dir=data_dir, eval_id=eval_id, alive=alive)

    def sweep_dead_runs(self, runs_root: Path) -> list[str]:
        from agent_evals.packs.spoke.sweeps import sweep_dead_runs  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        return sweep_dead_runs(runs_root)

    def preflight(self, env: Mapping[str, str] | None = None) -> list[str]:
        """With ``PORTAL_URL`` set, that portal must answer and accept ``PORTAL_TOKEN``."""
        env = os.environ if env is None else env
        if not env.get("PORTAL_URL", "").strip():
            return []
        from agent_evals.packs.spoke.portal.api import PortalAPI, PortalError  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        try:
            api = PortalAPI(env["PORTAL_URL"].strip(), token=env.get("PORTAL_TOKEN") or None, timeout=5.0)
            api.health()
            api.get_schema()  # an authenticated call: a wrong token is found here
        except PortalError as exc:
            return [f"PORTAL_URL: {' '.join(str(exc).split())} (unset PORTAL_URL to let the runner start a portal)"]
        return []

    def add_commands(self, sub: Any) -> None:
        from agent_evals.packs.spoke.commands import add_commands  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        add_commands(sub)

    def offered_tools(self) -> Mapping[str, ToolSpec] | None:
        """Every portal tool as the agent's model sees it, from the portal's generated catalog."""
        from agent_evals.authoring import mcp_tool_to_spec  # lazy: loads pydantic only when used (start-up time)
        from agent_evals.packs.spoke.portal.tool_catalog import catalog  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        return {t["name"]: mcp_tool_to_spec(t["name"], t["description"], t["input_schema"]) for t in catalog()}

    # -- conversation scope

    def side_effect(self, call: ToolCall) -> SideEffect | None:
        """The pull request (kind ``pull_request``: its number and link) a successful
        ``create_spoke_pull_request`` made."""
        if call.outcome != "ok" or call.name not in PR_CREATING_TOOLS or not isinstance(call.result, dict):
            return None
        pr_id, url = call.result.get("id"), call.result.get("url")
        if not isinstance(url, str):
            return None
        if isinstance(pr_id, int) and not isinstance(pr_id, bool):
            return pull_request(pr_id, url)
        match = _PR_URL.search(url)
        return pull_request(int(match.group(1)), url) if match else None

    def fixture_problems(self, fixtures: Any) -> list[str]:
        """Malformed fixtures, and copies that are not seed spokes (or spokes another fixture adds)."""
        from agent_evals.packs.spoke.fixtures import parse_fixtures  # lazy: loads pydantic only when used (start-up time)
        from agent_evals.authoring import did_you_mean  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        try:
            parsed = parse_fixtures(fixtures)
        except FixtureError as exc:
            return [str(exc)]
        known = seed_spoke_names()
        problems = []
        for number, fixture in enumerate(parsed, start=1):
            if fixture.copy_ not in known:
                problems.append(
                    f"fixture {number}: copy {fixture.copy_!r} is not a seed spoke{did_you_mean(fixture.copy_, sorted(known))}"
                )
            if type(fixture).__name__ == "SpokeFixture":
                known.add(fixture.name or fixture.copy_)
        return problems

    def conversation(self, trace: Trace, env: Mapping[str, str] | None = None) -> Conversation:
        return PortalConversation(trace, os.environ if env is None else env)


class PortalConversation(Conversation):
    """One conversation on the portal (``PORTAL_URL`` and ``PORTAL_TOKEN`` from the worker's environment)."""

    def __init__(self, trace: Trace, env: Mapping[str, str]) -> None:
        super().__init__(trace)
        self._env = dict(env)

    def _api(self) -> PortalAPI:
        from agent_evals.packs.spoke.portal.api import PortalAPI, PortalNotConfigured  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        url = self._env.get("PORTAL_URL", "").strip()
        if not url:
            raise PortalNotConfigured(
                "PORTAL_URL is not set: export the portal's base URL, e.g. PORTAL_URL=http://127.0.0.1:8400"
            )
        return PortalAPI(url, token=self._env.get("PORTAL_TOKEN") or None)

    def create_fixtures(self, fixtures: Any) -> list[dict[str, Any]]:
        """Made through the portal with the case's trace headers; raises a ``config`` error when the pack or
        the portal rejects one, a ``system`` error when the portal does not answer."""
        from agent_evals.packs.spoke.fixtures import create, parse_fixtures  # lazy: loads pydantic only when used (start-up time)

        return create(self._api(), parse_fixtures(fixtures), self.headers)

    def found_again(self, record: RunRecord) -> None:
        """After an error, the PRs this conversation created that the record missed, from the portal."""
        from agent_evals.packs.spoke.portal.api import FIXTURE_CREATED_BY, PortalError  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        try:
            found = self._api().list_pull_requests(test_id=self.trace.test_id)
        except PortalError as exc:  # the portal may be the thing that failed
            log.info("could not list this conversation's PRs from the portal: %s", exc)
            return
        for pr in found:
            if pr.get("created_by") != FIXTURE_CREATED_BY:
                record.add_side_effect(pull_request(pr["id"], pr.get("url", "")))

    def snapshot(self, record: RunRecord, checks: Sequence[CheckRef]) -> Snapshot | None:
        from agent_evals.packs.spoke.snapshot import take_snapshot  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        live = not self.trace.test_id  # a production conversation: no trace to find more by
        return take_snapshot(record, checks, self._api(), test_id=self.trace.test_id or None, any_host=live)

    def spoiled(self, record: RunRecord, snapshot: Snapshot) -> str | None:
        from agent_evals.packs.spoke.snapshot import taken_away  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        return taken_away(record, snapshot)

    def undo(self, record: RunRecord, *, fixtures: bool) -> dict[str, Any] | None:
        """Abandon the PRs the conversation created, in the worker, once the end state is read (the
        snapshot, or after an error the portal's list by test id, added them all to the record): no
        process per row for cleanup. A row that ended cleanly with none says so, so the cleanup hook
        (which checks ``metadata.cleanup``) starts no process for it either; an errored row without
        PRs is left to the hook's own look at the portal. Then the case's fixtures, when it made some."""
        cleanup = self._abandon_own(record)
        if fixtures:  # also when making them failed half-way: nothing is left behind
            cleanup = {**(cleanup or {"by": "provider"}), "fixtures": self._remove_fixtures()}
        return cleanup

    def _abandon_own(self, record: RunRecord) -> dict[str, Any] | None:
        from agent_evals.packs.spoke.portal.api import PortalError  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is
        from agent_evals.packs.spoke.undo import abandon, pr_report  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        own = created_pull_requests(record)
        if not own:
            errored = record.end is None or record.end.reason == "error"
            return None if errored or not self._env.get("PORTAL_URL") else {**pr_report().as_dict(), "by": "provider"}
        try:
            report = abandon(self._api(), [p.id for p in own])
        except PortalError as exc:
            return {**pr_report(str(exc)).as_dict(), "by": "provider"}
        return {**report.as_dict(), "by": "provider"}

    def _remove_fixtures(self) -> dict[str, Any]:
        from agent_evals.packs.spoke.portal.api import PortalError  # lazy: keeps agent_evals.packs.spoke.checks.input_diff's start-up as small as it is

        try:
            return self._api().remove_fixtures(test_id=self.trace.test_id)
        except PortalError as exc:  # the run's sweep tries again by eval id
            return {"error": str(exc)}


SYSTEM = PortalSystem()

__all__ = ["PR_CREATING_TOOLS", "SYSTEM", "PortalConversation", "PortalSystem"]
