"""Read Promptfoo's results database (``$PROMPTFOO_CONFIG_DIR/promptfoo.db``), read-only.

The schema is Promptfoo 0.123.1's: ``evals`` (``results`` holds ``durationMs`` once the
eval finished, ``{}`` while it runs or after an interrupt) and ``eval_results`` (one row
per test, prompt and repeat, stored in completion order, so read ``ORDER BY test_idx,
prompt_idx``). SQLite's JSON functions extract only what the report needs (one parse per
column; the number of tool calls is the last call's ``index``), so the conversation records'
transcripts, tool results and snapshots are never loaded into Python.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_evals.report.errors import ReportInputError
from agent_evals.report.model import EvalInfo
from agent_evals.report.rows import Row, row_from_promptfoo
from agent_evals.report.shard_info import stamp_fields

DB_NAME = "promptfoo.db"

_ROWS = """
SELECT test_idx, prompt_idx, success, failure_reason, error, cost, latency_ms, named_scores,
  json_extract(test_case, '$.description', '$.metadata.id', '$.metadata.group', '$.metadata.priority'),
  json_extract(provider, '$.id', '$.label'),
  json_extract(response, '$.metadata.agent_evals', '$.metadata.case_id', '$.metadata.agent',
               '$.metadata.usage', '$.metadata.conversation_end', '$.metadata.turns', '$.metadata.error_kind',
               '$.metadata.replay.cassette', '$.metadata.tool_calls[#-1].index', {graders}),
  json_extract(grading_result, '$.componentResults', '$.namedScoreWeights'),
  CASE WHEN instr(metadata, '"not_graded"') THEN json_extract(metadata, '$.not_graded') END,
  json_extract(response, '$.metadata.user', '$.metadata.user_review')
FROM eval_results WHERE eval_id = ? ORDER BY test_idx, prompt_idx
"""
MAX_GRADERS = 20  # the graders (and metrics) of a row's first kit checks, read in the same parse of the response
_ROWS = _ROWS.format(graders=", ".join(f"'$.metadata.checks[{i}].grader', '$.metadata.checks[{i}].metric'"
                                       for i in range(MAX_GRADERS)))


@dataclass(frozen=True)
class StoredEval:
    eval_id: str
    created_at: int
    description: str
    finished: bool
    stamp: str | None = None  # a merged eval's config.metadata.agentEvals (JSON)
    rounds: str | None = None  # --repeat-until-decided's config.metadata.agentEvalsRounds (JSON)


@contextmanager
def connect(db: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection, or a one-line :class:`ReportInputError`."""
    if not db.is_file():
        raise ReportInputError(
            f"no Promptfoo results database at {db}: run a suite first, or set PROMPTFOO_CONFIG_DIR"
        )
    try:
        with closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)) as con:
            yield con
    except sqlite3.Error as exc:
        raise ReportInputError(f"cannot read the results database {db}: {exc}") from None


def list_evals(con: sqlite3.Connection) -> list[StoredEval]:
    """Every eval, newest first (the viewer's order)."""
    query = (
        "SELECT id, created_at, description, results, json_extract(config, '$.metadata.agentEvals'), "
        "json_extract(config, '$.metadata.agentEvalsRounds') FROM evals ORDER BY created_at DESC, id DESC"
    )
    return [
        StoredEval(str(eid), int(created or 0), str(description or ""), _finished(results), stamp, rounds)
        for eid, created, description, results, stamp, rounds in con.execute(query)
    ]


def read_eval(con: sqlite3.Connection, stored: StoredEval) -> tuple[EvalInfo, list[Row]]:
    rows = [_row(values, stored.eval_id) for values in con.execute(_ROWS, (stored.eval_id,))]
    created = datetime.fromtimestamp(stored.created_at / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    info = EvalInfo(
        eval_id=stored.eval_id,
        source="database",
        description=stored.description,
        created_at=created,
        finished=stored.finished,
        rows=len(rows),
        until_decided=_stamp(stored.rounds),
        **stamp_fields(_stamp(stored.stamp)),
    )
    return info, rows


def _stamp(text: str | None) -> dict[str, Any] | None:
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _row(values: tuple[Any, ...], eval_id: str) -> Row:
    idx, prompt_idx, success, failure, error, cost, latency, named, test, provider, record, grading, not_graded, user = (
        values
    )
    user_info, user_review = json.loads(user) if user else (None, None)
    description, case_id, group, priority = json.loads(test)
    provider_id, label = json.loads(provider)
    marker, recorded_id, agent, usage, end, turns, kind, cassette, last_call, *graders = (
        json.loads(record) if record else [None] * (9 + 2 * MAX_GRADERS)
    )
    components, weights = json.loads(grading) if grading else (None, None)
    raw = {
        "testIdx": idx,
        "promptIdx": prompt_idx,
        "success": bool(success),
        "failureReason": failure,
        "error": error,
        "cost": cost,
        "latencyMs": latency,
        "namedScores": json.loads(named) if named else {},
        "testCase": {
            "description": description,
            "metadata": {"id": case_id, "group": group, "priority": priority},
        },
        "provider": {"id": provider_id, "label": label},
        "response": {
            "metadata": {
                "case_id": recorded_id,
                "agent": agent,
                "usage": usage,
                "conversation_end": end,
                "turns": turns,
                "error_kind": kind,
                "replay": {"cassette": cassette} if cassette else None,
                "checks": [{"metric": metric, "grader": grader}
                           for grader, metric in zip(graders[::2], graders[1::2], strict=True) if grader],
                "user": user_info,
                "user_review": user_review,
            }
        },
        "gradingResult": {"componentResults": components, "namedScoreWeights": weights},
        "metadata": {"not_graded": json.loads(not_graded) if not_graded else None},
    }
    # a tool call's index is its 1-based position, so the last one's is the count; none in a record: 0
    tool_calls = last_call if last_call is not None else (0 if marker is not None else None)
    return row_from_promptfoo(raw, eval_id, tool_calls=tool_calls)


def _finished(results: Any) -> bool:
    try:
        return "durationMs" in json.loads(results or "{}")
    except ValueError:
        return False
