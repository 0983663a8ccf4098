"""Abandon the pull requests evaluation runs created, so the test repository doesn't fill up.

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
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_evals.packs.spoke.portal.api import PortalAPI, PortalError, PortalNotFound, find_pull_request_urls
from agent_evals.record import MARKER, RecordError, RunRecord, Trace

log = logging.getLogger(__name__)

RUN_ID_ENV = "AGENT_EVALS_RUN_ID"
RETRY_DELAYS_S = (0.2, 0.5, 1.0)


@dataclass
class CleanupReport:
    abandoned: list[int] = field(default_factory=list)
    already_closed: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)
    error: str | None = None  # the portal could not be asked at all
    removed_fixtures: list[str] = field(default_factory=list)  # what the cases' fixtures had made
    kept: list[int] = field(default_factory=list)  # active PRs of runs still going, left to them

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"abandoned": self.abandoned, "already_closed": self.already_closed}
        if self.removed_fixtures:
            out["removed_fixtures"] = self.removed_fixtures
        if self.failed:
            out["failed"] = {str(k): v for k, v in self.failed.items()}
        if self.error:
            out["error"] = self.error
        return out

    def summary(self) -> str:
        parts = [f"abandoned {len(self.abandoned)} PR(s)"]
        if self.removed_fixtures:
            parts.append(f"removed {len(self.removed_fixtures)} fixture(s)")
        if self.kept:
            parts.append(f"left {len(self.kept)} PR(s) of runs still going ({', '.join(f'#{i}' for i in self.kept)})")
        if self.failed:
            parts.append(f"{len(self.failed)} failed: " + "; ".join(f"#{k}: {v}" for k, v in self.failed.items()))
        if self.error:
            parts.append(f"error: {self.error}")
        return ", ".join(parts)


def run_id(promptfoo_eval_id: str | None = None) -> str | None:
    """The id a run's PRs carry: the runner's ``AGENT_EVALS_RUN_ID``, else Promptfoo's eval id."""
    return os.environ.get(RUN_ID_ENV) or promptfoo_eval_id


def abandon(
    api: PortalAPI, ids: Iterable[int], *, sleep: Callable[[float], None] = time.sleep
) -> CleanupReport:
    """Abandon each PR, retrying transient failures; completed PRs are left alone."""
    report = CleanupReport()
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
            report.failed[pr_id] = "no such pull request"
            return
        except PortalError as exc:
            if exc.status == 409:  # completed: not ours to undo
                report.already_closed.append(pr_id)
                return
            last = str(exc)
            log.info("abandon PR #%d failed (attempt %d): %s", pr_id, attempt + 1, exc)
            continue
        (report.abandoned if pr.get("status") == "abandoned" else report.already_closed).append(pr_id)
        return
    report.failed[pr_id] = last


def _metadata_of_row(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    response = result.get("response") or {}
    return [m for m in (response.get("metadata"), result.get("metadata")) if isinstance(m, Mapping)]


def _records_of_row(result: Mapping[str, Any]) -> list[RunRecord]:
    """The run records in a Promptfoo result row (the response's metadata, then the row's)."""
    records = []
    for metadata in _metadata_of_row(result):
        if MARKER in metadata:
            try:
                records.append(RunRecord.from_metadata(metadata))
            except RecordError as exc:  # cleanup still reads the keys it needs below
                log.warning("cleanup: the row's run record is unreadable (%s); reading its pull requests anyway", exc)
    return records


def pull_request_ids_of_row(result: Mapping[str, Any], base_url: str) -> list[int]:
    """PR ids named by one Promptfoo result row: the run record's ``pull_requests`` (read leniently, so
    a damaged record still gets its PRs cleaned up) and URLs of this portal in the output."""
    ids: list[int] = []
    for metadata in _metadata_of_row(result):
        for pr in metadata.get("pull_requests") or ():
            if isinstance(pr, Mapping) and isinstance(pr.get("id"), int) and not isinstance(pr.get("id"), bool):
                ids.append(pr["id"])
    output = (result.get("response") or {}).get("output")
    if isinstance(output, str):
        ids.extend(find_pull_request_urls(output, base_url))
    return list(dict.fromkeys(ids))


def trace_of_row(result: Mapping[str, Any]) -> Trace | None:
    for record in _records_of_row(result):
        if record.trace is not None:
            return record.trace
    for metadata in _metadata_of_row(result):
        trace = metadata.get("trace")
        if isinstance(trace, Mapping) and trace.get("test_id"):
            return Trace(str(trace.get("eval_id") or ""), str(trace["test_id"]))
    return None


def cleanup_test(result: Mapping[str, Any], api: PortalAPI | None = None) -> CleanupReport:
    """Abandon every PR one test row created (see the module docstring)."""
    try:
        api = api or PortalAPI.from_env()
        ids = pull_request_ids_of_row(result, api.base_url)
        trace = trace_of_row(result)
        if trace is not None and trace.test_id:
            ids += [pr["id"] for pr in api.list_pull_requests(status="active", test_id=trace.test_id)]
    except PortalError as exc:
        return CleanupReport(error=str(exc))
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
        return CleanupReport(error=str(exc))
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
    report.abandoned += [i for i in removed.get("abandoned") or [] if i not in report.abandoned]


def cleanup_all_eval_prs(api: PortalAPI, *, alive: Callable[[str], bool] = lambda eval_id: False) -> CleanupReport:
    """Abandon every active PR that an eval run created (it has an eval id) and whose run is over
    (``alive(eval_id)`` false); PRs people made, and those of runs still going, are untouched
    (the latter listed in ``kept``)."""
    try:
        found = [pr for pr in api.list_pull_requests(status="active") if pr.get("eval_id")]
    except PortalError as exc:
        return CleanupReport(error=str(exc))
    kept = [pr["id"] for pr in found if alive(str(pr["eval_id"]))]
    report = abandon(api, [pr["id"] for pr in found if pr["id"] not in kept])
    report.kept = kept
    return report
