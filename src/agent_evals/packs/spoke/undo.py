"""Undo on the portal: abandon the pull requests evaluation runs created and remove their cases'
fixtures, so the test repository doesn't fill up (the spoke system's undo, :mod:`.system`).

Three levels, from narrow to wide:

- :func:`cleanup_test` — after each test (the ``afterEach`` hook): the PRs in the
  row's metadata, any PR URL of this portal in its output, and any PR the portal
  recorded with the row's trace id (so a provider that errored after creating one
  is covered too).
- :func:`cleanup_run` — after the run (``afterAll`` hook, and the runner once
  Promptfoo has exited, also after Ctrl-C): every active PR with the run's eval id,
  and the fixtures its cases made (``cleanup_test`` removes a test's fixtures too).
- :func:`cleanup_all_eval_prs` — ``agent-evals cleanup``: every active PR created
  by any eval run (a PR with an eval id) that is over; PRs people made, and those of
  runs still going, are never touched.

A failed abandon is retried, then reported; cleanup never raises into the eval.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agent_evals.authoring import CleanupReport, UndoWords, metadata_of_row, trace_of_row
from agent_evals.packs.spoke.created_prs import PULL_REQUEST, pull_request, pull_request_ids
from agent_evals.packs.spoke.portal.api import PortalAPI, PortalError, PortalNotFound, find_pull_request_urls

log = logging.getLogger(__name__)

RETRY_DELAYS_S = (0.2, 0.5, 1.0)
PR_WORDS = UndoWords(PULL_REQUEST, "abandoned", "PR", "#")  # "abandoned 2 PR(s)", "#12"


def pr_report(error: str | None = None) -> CleanupReport:
    """An empty report of the portal's undo (its words: pull requests are abandoned)."""
    return CleanupReport(error=error, words=(PR_WORDS,))


def abandon(
    api: PortalAPI, ids: Iterable[int], *, sleep: Callable[[float], None] = time.sleep
) -> CleanupReport:
    """Abandon each PR, retrying transient failures; completed PRs are left alone."""
    report = pr_report()
    for pr_id in dict.fromkeys(int(i) for i in ids):
        _abandon_one(api, pr_id, report, sleep)
    return report


def _abandon_one(api: PortalAPI, pr_id: int, report: CleanupReport, sleep: Callable[[float], None]) -> None:
    last = ""
    for attempt, delay in enumerate((0.0, *RETRY_DELAYS_S)):
        if delay:
            sleep(delay)
        try:
            pr = api.abandon_pull_request(pr_id)
        except PortalNotFound:
            report.failed[pull_request(pr_id)] = "no such pull request"
            return
        except PortalError as exc:
            if exc.status == 409:  # completed: not ours to undo
                report.already_gone.append(pull_request(pr_id))
                return
            last = str(exc)
            log.info("abandon PR #%d failed (attempt %d): %s", pr_id, attempt + 1, exc)
            continue
        (report.undone if pr.get("status") == "abandoned" else report.already_gone).append(pull_request(pr_id))
        return
    report.failed[pull_request(pr_id)] = last


def pull_request_ids_of_row(result: Mapping[str, Any], base_url: str) -> list[int]:
    """PR ids named by one Promptfoo result row: the run record's pull requests (read leniently, so a
    damaged record still gets its PRs cleaned up: :func:`.created_prs.pull_request_ids`) and URLs of this
    portal in the output."""
    ids: list[int] = []
    for metadata in metadata_of_row(result):
        ids.extend(pull_request_ids(metadata))
    output = (result.get("response") or {}).get("output")
    if isinstance(output, str):
        ids.extend(find_pull_request_urls(output, base_url))
    return list(dict.fromkeys(ids))


def cleanup_test(result: Mapping[str, Any], api: PortalAPI | None = None) -> CleanupReport:
    """Abandon every PR one test row created (see the module docstring)."""
    try:
        api = api or PortalAPI.from_env()
        ids = pull_request_ids_of_row(result, api.base_url)
        trace = trace_of_row(result)
        if trace is not None and trace.test_id:
            ids += [pr["id"] for pr in api.list_pull_requests(status="active", test_id=trace.test_id)]
    except PortalError as exc:
        return pr_report(str(exc))
    report = abandon(api, ids)
    if trace is not None and trace.test_id:
        _remove_fixtures(api, report, test_id=trace.test_id)
    return report


def cleanup_run(eval_id: str, api: PortalAPI | None = None) -> CleanupReport:
    """Abandon every active PR created with this eval id, and remove its cases' fixtures."""
    try:
        api = api or PortalAPI.from_env()
        ids = [pr["id"] for pr in api.list_pull_requests(status="active", eval_id=eval_id)]
    except PortalError as exc:
        return pr_report(str(exc))
    report = abandon(api, ids)
    _remove_fixtures(api, report, eval_id=eval_id)
    return report


def _remove_fixtures(api: PortalAPI, report: CleanupReport, **which: str) -> None:
    """The fixtures (and any fixture PR still active) of a test or an eval."""
    try:
        removed = api.remove_fixtures(**which)
    except PortalError as exc:
        if exc.status == 404:  # a portal without fixtures (an older one): nothing to remove
            return
        report.error = report.error or f"removing fixtures: {exc}"
        return
    report.removed_fixtures += [str(name) for name in removed.get("removed") or []]
    fixture_prs = [pull_request(i) for i in removed.get("abandoned") or [] if isinstance(i, int)]
    report.undone += [e for e in fixture_prs if e not in report.undone]


def cleanup_all_eval_prs(api: PortalAPI, *, alive: Callable[[str], bool] = lambda eval_id: False) -> CleanupReport:
    """Abandon every active PR that an eval run created (it has an eval id) and whose run is over
    (``alive(eval_id)`` false); PRs people made, and those of runs still going, are untouched
    (the latter listed in ``kept``)."""
    try:
        found = [pr for pr in api.list_pull_requests(status="active") if pr.get("eval_id")]
    except PortalError as exc:
        return pr_report(str(exc))
    kept = [pr["id"] for pr in found if alive(str(pr["eval_id"]))]
    report = abandon(api, [pr["id"] for pr in found if pr["id"] not in kept])
    report.kept = [pull_request(i) for i in kept]
    return report
