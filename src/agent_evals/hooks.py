"""The logic behind ``hooks/cleanup.py`` (Promptfoo calls it in a new process per hook)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any

from agent_evals.cleanup import cleanup_run, cleanup_test, run_id
from agent_evals.judge import judge_configured, model_graded_asserts

log = logging.getLogger("agent_evals.hooks")


def extension_hook(hook_name: str, context: Mapping[str, Any]) -> dict[str, Any] | None:
    """Promptfoo calls this for beforeAll, beforeEach, afterEach and afterAll."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="agent-evals %(levelname)s: %(message)s")
    try:
        if hook_name == "beforeEach":
            return _before_each(context)
        if hook_name == "afterEach":
            return _after_each(context)
        if hook_name == "afterAll":
            _after_all(context)
    except Exception as exc:  # a hook must never break the eval
        log.error("%s hook failed: %s", hook_name, exc)
    return None


def _before_each(context: Mapping[str, Any]) -> dict[str, Any] | None:
    """Without a grader model, take model-graded assertions out and say so (never pass them)."""
    test = context.get("test") or {}
    asserts = list(test.get("assert") or [])
    graded = model_graded_asserts(asserts)
    if not graded or judge_configured():
        return None  # returning nothing leaves the test (and its providers) untouched
    metadata = dict(test.get("metadata") or {})
    metadata["not_graded"] = [f"{a.get('type')} ({a.get('metric') or 'no metric'}): no grader model" for a in graded]
    kept = [a for a in asserts if a not in graded]
    log.warning("%s: %d model-graded assertion(s) NOT GRADED: no grader model configured", test.get("description"), len(graded))
    return {"test": {**test, "assert": kept, "metadata": metadata}}


def _after_each(context: Mapping[str, Any]) -> dict[str, Any] | None:
    result = context.get("result") or {}
    report = cleanup_test(result)
    if report.failed or report.error:
        log.error("cleanup after test: %s", report.summary())
    if not (report.abandoned or report.failed or report.error):
        return None
    # Promptfoo merges ``result.metadata`` of an afterEach return into the row.
    return {"result": {"metadata": {"cleanup": report.as_dict()}}}


def _after_all(context: Mapping[str, Any]) -> None:
    eval_id = run_id(context.get("evalId"))
    if not eval_id:
        log.warning("afterAll: no eval id, nothing to clean up")
        return
    report = cleanup_run(eval_id)
    if report.abandoned or report.failed or report.error:
        log.warning("cleanup after run %s: %s", eval_id, report.summary())
