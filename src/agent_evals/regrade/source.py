"""A stored eval, whole, in the shape of Promptfoo's ``-o`` JSON file (what ``promptfoo import``
takes): from the results database (an eval id) or from an ``-o`` file.

The report reads only what it needs; re-grading needs every row whole (the run record and its
end-state snapshot, the test's assertions, the grading), so this reads the database's
``evals`` and ``eval_results`` tables as Promptfoo 0.123.1 stores them and rebuilds each row.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_evals.report.errors import ReportInputError
from agent_evals.report.promptfoo_db import DB_NAME, connect
from agent_evals.report.promptfoo_json import is_promptfoo_results, read_json

_ROWS = """
SELECT id, test_idx, prompt_idx, test_case, prompt, prompt_id, provider, latency_ms, cost, response, error, success,
       score, grading_result, named_scores, metadata, failure_reason
FROM eval_results WHERE eval_id = ? ORDER BY test_idx, prompt_idx
"""
_JSON_COLUMNS = ("testCase", "prompt", "provider", "response", "gradingResult", "namedScores", "metadata")


def load_eval(spec: str, config_dir: Path) -> dict[str, Any]:
    """The eval ``spec`` names (an eval id in ``config_dir``'s database, or an ``-o`` file), whole."""
    path = Path(spec)
    if spec.endswith(".json") or path.is_file():
        data = read_json(path)
        if not is_promptfoo_results(data):
            raise ReportInputError(f"{path}: not a Promptfoo results file (-o JSON): no results.results list")
        return data
    with connect(config_dir / DB_NAME) as con:
        found = con.execute(
            "SELECT id, created_at, description, results, config, prompts, vars, runtime_options FROM evals WHERE id = ?",
            (spec,),
        ).fetchone()
        if found is None:
            raise ReportInputError(f"no eval {spec} in {config_dir / DB_NAME}")
        rows = [_row(values) for values in con.execute(_ROWS, (spec,))]
    eval_id, created, description, results, config, prompts, vars_, runtime = found
    stamp = datetime.fromtimestamp(int(created or 0) / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    stored = _loads(results)  # {"durationMs": …} once the eval finished
    finished = {"stats": dict(stored)} if isinstance(stored, dict) and "durationMs" in stored else {}
    return {
        "evalId": eval_id,
        "results": {"version": 3, "timestamp": stamp, "prompts": _loads(prompts) or [], "results": rows, **finished},
        "config": {**(_loads(config) or {}), "description": description or ""},
        "shareableUrl": None,
        "metadata": {"promptfooVersion": "0.123.1", "evaluationCreatedAt": stamp, "exportedAt": stamp},
        "vars": _loads(vars_) or [],
        "runtimeOptions": _loads(runtime) or {},
    }


def _row(values: tuple[Any, ...]) -> dict[str, Any]:
    (row_id, test_idx, prompt_idx, test_case, prompt, prompt_id, provider, latency, cost, response, error, success,
     score, grading, named, metadata, failure) = values
    row: dict[str, Any] = {
        "id": row_id, "testIdx": test_idx, "promptIdx": prompt_idx, "promptId": prompt_id, "latencyMs": latency,
        "cost": cost or 0, "error": error, "success": bool(success), "score": score, "failureReason": failure or 0,
        "testCase": test_case, "prompt": prompt, "provider": provider, "response": response,
        "gradingResult": grading, "namedScores": named, "metadata": metadata,
    }
    for key in _JSON_COLUMNS:
        row[key] = _loads(row[key])
    row["vars"] = (row["testCase"] or {}).get("vars") or {}
    return row


def _loads(text: Any) -> Any:
    if text is None or not isinstance(text, str | bytes):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return None
