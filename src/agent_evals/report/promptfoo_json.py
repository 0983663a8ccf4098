"""Read a Promptfoo ``-o results.json`` file (format ``results.version`` 3, Promptfoo 0.123).

The whole file is parsed at once; for very large runs read the results database instead
(``agent-evals report latest``), which extracts only what the report needs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_evals.report.errors import ReportInputError
from agent_evals.report.model import EvalInfo
from agent_evals.report.rows import NotPromptfooRow, Row, row_from_promptfoo


def read_json(path: Path) -> Any:
    """The parsed JSON of ``path``, or a one-line :class:`ReportInputError`."""
    try:
        return json.loads(path.read_bytes())
    except FileNotFoundError:
        raise ReportInputError(f"{path}: no such file") from None
    except OSError as exc:
        raise ReportInputError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{path}: not JSON ({exc})") from None


def is_promptfoo_results(data: Any) -> bool:
    return (
        isinstance(data, Mapping)
        and isinstance(data.get("results"), Mapping)
        and isinstance(data["results"].get("results"), list)
    )


def eval_from_json(data: Any, path: Path) -> tuple[EvalInfo, list[Row]]:
    """The eval and its rows (sorted by test and prompt index) of a parsed ``-o`` file."""
    if not is_promptfoo_results(data):
        raise ReportInputError(f"{path}: not a Promptfoo results file (-o JSON): no results.results list")
    results = data["results"]
    eval_id = str(data.get("evalId") or path.stem)
    try:
        rows = [row_from_promptfoo(raw, eval_id) for raw in results["results"]]
    except (NotPromptfooRow, TypeError, ValueError) as exc:
        raise ReportInputError(f"{path}: not a Promptfoo results file (-o JSON): {exc}") from None
    rows.sort(key=lambda row: (row.test_idx, row.prompt_idx))
    config = data.get("config") if isinstance(data.get("config"), Mapping) else {}
    metadata = data.get("metadata") if isinstance(data.get("metadata"), Mapping) else {}
    info = EvalInfo(
        eval_id=eval_id,
        source=str(path),
        description=str(config.get("description") or ""),
        created_at=_seconds(metadata.get("evaluationCreatedAt") or results.get("timestamp")),
        finished=isinstance(results.get("stats"), Mapping),
        rows=len(rows),
    )
    return info, rows


def _seconds(stamp: Any) -> str | None:
    """``2026-01-01T00:00:00.000Z`` as ``2026-01-01T00:00:00Z`` (the database's form)."""
    if not isinstance(stamp, str) or not stamp:
        return None
    return re.sub(r"\.\d+Z$", "Z", stamp)
