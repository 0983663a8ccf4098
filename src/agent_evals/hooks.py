"""The logic behind ``hooks/cleanup.py`` (Promptfoo calls it in a new process per hook)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any

from agent_evals.cleanup import cleanup_run, cleanup_test, run_id

log = logging.getLogger("agent_evals.hooks")


def extension_hook(hook_name: str, context: Mapping[str, Any]) -> dict[str, Any] | None:
    """Promptfoo calls this for beforeAll, beforeEach, afterEach and afterAll."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="agent-evals %(levelname)s: %(message)s")
    try:
        if hook_name == "afterEach":
            return _after_each(context)
        if hook_name == "afterAll":
            _after_all(context)
    except Exception as exc:  # a hook must never break the eval
        log.error("%s hook failed: %s", hook_name, exc)
    return None


def _after_each(context: Mapping[str, Any]) -> dict[str, Any] | None:
    result = context.get("result") or {}
    report = cleanup_test(result)
    if report.failed or report.error:
        log.error("cleanup after test: %s", report.summary())
    if not (report.abandoned or report.failed or report.error):
        return None
    return {"metadata": {"cleanup": report.as_dict()}}


def _after_all(context: Mapping[str, Any]) -> None:
    eval_id = run_id(context.get("evalId"))
    if not eval_id:
        log.warning("afterAll: no eval id, nothing to clean up")
        return
    report = cleanup_run(eval_id)
    if report.abandoned or report.failed or report.error:
        log.warning("cleanup after run %s: %s", eval_id, report.summary())
