"""Undo what evaluation runs made, through the suite's system (:mod:`agent_evals.system`).

- :func:`cleanup_test` — after each test (the ``afterEach`` hook): what the row made, by its run
  record and its trace's test id (a provider that errored after making something is covered too).
- :func:`cleanup_run` — after the run (``afterAll`` hook, and the runner once Promptfoo has exited,
  also after Ctrl-C): everything tagged with the run's eval id, its cases' fixtures included.

The system is the one the environment names (:func:`system_from_env`: the suite's pack, which the
runner and the plain hooks put in ``AGENT_EVALS_PACK``, else the first built-in pack whose system the
environment reaches). A failed undo is reported; cleanup never raises into the eval.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from agent_evals.record import MARKER, RecordError, RunRecord, Trace
from agent_evals.system import PACK_ENV, CleanupReport, Running, System

log = logging.getLogger(__name__)

RUN_ID_ENV = "AGENT_EVALS_RUN_ID"

__all__ = ["RUN_ID_ENV", "CleanupReport", "cleanup_run", "cleanup_test", "run_id", "system_from_env", "trace_of_row"]


def run_id(promptfoo_eval_id: str | None = None) -> str | None:
    """The id a run's side effects carry: the runner's ``AGENT_EVALS_RUN_ID``, else Promptfoo's eval id."""
    return os.environ.get(RUN_ID_ENV) or promptfoo_eval_id


def system_from_env(env: Mapping[str, str] | None = None) -> tuple[System, Running | None]:
    """The system the environment names and the running one it reaches (None: it reaches none)."""
    from agent_evals.packs import built_in, load_pack  # lazy: keeps agent_evals.hooks's start-up as small as it is

    env = os.environ if env is None else env
    if env.get(PACK_ENV):
        system = load_pack(env[PACK_ENV]).system
        return system, system.attach(env)
    for pack in built_in().values():
        running = pack.system.attach(env)
        if running is not None:
            return pack.system, running
    return System(), None


def metadata_of_row(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The row's metadata: the provider's response's, then the row's own."""
    response = result.get("response") or {}
    return [m for m in (response.get("metadata"), result.get("metadata")) if isinstance(m, Mapping)]


def _records_of_row(result: Mapping[str, Any]) -> list[RunRecord]:
    """The run records in a Promptfoo result row (the response's metadata, then the row's)."""
    records = []
    for metadata in metadata_of_row(result):
        if MARKER in metadata:
            try:
                records.append(RunRecord.from_metadata(metadata))
            except RecordError as exc:  # cleanup still reads the keys it needs
                log.warning("cleanup: the row's run record is unreadable (%s); reading its pull requests anyway", exc)
    return records


def trace_of_row(result: Mapping[str, Any]) -> Trace | None:
    for record in _records_of_row(result):
        if record.trace is not None:
            return record.trace
    for metadata in metadata_of_row(result):
        trace = metadata.get("trace")
        if isinstance(trace, Mapping) and trace.get("test_id"):
            return Trace(str(trace.get("eval_id") or ""), str(trace["test_id"]))
    return None


NOT_REACHED = ("no system under test is reachable from the environment: set what the suite's system needs "
               "(the portal: PORTAL_URL and PORTAL_TOKEN) and AGENT_EVALS_PACK (the runner and the plain hooks do)")


def _running(running: Running | None) -> Running | CleanupReport:
    """The system to undo through, or the report to answer: nothing to do (the pack's system starts
    nothing), or an error when the environment names no system at all."""
    if running is not None:
        return running
    _, found = system_from_env()
    if found is not None:
        return found
    return CleanupReport() if os.environ.get(PACK_ENV) else CleanupReport(error=NOT_REACHED)


def cleanup_test(result: Mapping[str, Any], running: Running | None = None) -> CleanupReport:
    """Undo what one test row made (see the module docstring)."""
    target = _running(running)
    return target if isinstance(target, CleanupReport) else target.undo_row(result)


def cleanup_run(eval_id: str, running: Running | None = None) -> CleanupReport:
    """Undo everything tagged with this eval id, its cases' fixtures included."""
    target = _running(running)
    return target if isinstance(target, CleanupReport) else target.undo_eval(eval_id)
