"""The logic behind ``hooks/cleanup.py``, the Python form of the cleanup hook (Promptfoo calls it in
a new process per hook), and ``python -m agent_evals.hooks after-each``, which the suites' hook
``hooks/kit.js`` calls for a row the provider could not clean up itself."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any
import json

from agent_evals.cleanup import cleanup_run, cleanup_test, run_id

log = logging.getLogger("agent_evals.hooks")


def extension_hook(hook_name: str, context: Mapping[str, Any]) -> dict[str, Any] | None:
    """Promptfoo calls this for every hook; it acts on afterEach and afterAll."""
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
    if not report.acted:
        return None
    # Promptfoo merges ``result.metadata`` of an afterEach return into the row.
    return {"result": {"metadata": {"cleanup": report.as_dict()}}}


def _after_all(context: Mapping[str, Any]) -> None:
    eval_id = run_id(context.get("evalId"))
    if not eval_id:
        log.warning("afterAll: no eval id, nothing to clean up")
        return
    report = cleanup_run(eval_id)
    if report.acted:
        log.warning("cleanup after run %s: %s", eval_id, report.summary())


def after_each_from_stdin() -> int:
    """``python -m agent_evals.hooks after-each``: clean up one row given as JSON on stdin and print
    the cleanup report as JSON (``hooks/kit.js`` calls it for a row the provider did not clean up)."""
    try:
        row = json.load(sys.stdin)
    except ValueError as exc:
        print(json.dumps({"error": f"the row is not JSON: {exc}"}))
        return 2
    report = cleanup_test(row if isinstance(row, dict) else {})
    print(json.dumps(report.as_dict()))
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["after-each"]:
        sys.exit(after_each_from_stdin())
    print("usage: python -m agent_evals.hooks after-each < row.json", file=sys.stderr)
    sys.exit(2)
