"""Read a Promptfoo ``-o results.json`` file (format ``results.version`` 3, Promptfoo 0.123).

The file as Promptfoo writes it (indented by two) is read row by row
(:mod:`agent_evals.report.json_rows`); a file in another layout is parsed whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_evals.report.errors import ReportInputError
from agent_evals.report.json_rows import split_rows
from agent_evals.report.model import EvalInfo
from agent_evals.report.rows import NotPromptfooRow, Row, row_from_promptfoo
from agent_evals.report.shard_info import stamp_fields, stamp_of

_REPORT_FORMAT = re.compile(rb'^\s*\{\s*"format"\s*:\s*"(agent-evals/report@\d+)"')
_EVAL_ID = re.compile(rb'^\{\n  "evalId": "([^"\\]*)"')


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


def report_format(path: Path) -> str | None:
    """The format of a stored agent-evals report (its first key), else None."""
    match = _REPORT_FORMAT.match(_start(path))
    return match.group(1).decode() if match else None


def _start(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(256)
    except OSError:
        return b""


def read_results_file(path: Path) -> tuple[EvalInfo, list[Row]]:
    """The eval and its rows (by test and prompt index) of a ``-o`` file."""
    match = _EVAL_ID.match(_start(path))
    eval_id = match.group(1).decode() if match else path.stem
    try:
        streamed = split_rows(path, lambda raw: row_from_promptfoo(raw, eval_id))
    except NotPromptfooRow as exc:
        raise ReportInputError(f"{path}: not a Promptfoo results file (-o JSON): {exc}") from None
    except OSError:
        streamed = None  # read_json says what is wrong
    if streamed is None:
        return eval_from_json(read_json(path), path)
    document, rows = streamed
    if not is_promptfoo_results(document):
        raise ReportInputError(f"{path}: not a Promptfoo results file (-o JSON): no results.results list")
    return _info(document, path, rows), rows


def is_promptfoo_results(data: Any) -> bool:
    return (
        isinstance(data, Mapping)
        and isinstance(data.get("results"), Mapping)
        and isinstance(data["results"].get("results"), list)
    )


def eval_from_json(data: Any, path: Path) -> tuple[EvalInfo, list[Row]]:
    """The eval and its rows (by test and prompt index) of a parsed ``-o`` file."""
    if not is_promptfoo_results(data):
        raise ReportInputError(f"{path}: not a Promptfoo results file (-o JSON): no results.results list")
    eval_id = str(data.get("evalId") or path.stem)
    try:
        rows = [row_from_promptfoo(raw, eval_id) for raw in data["results"]["results"]]
    except (NotPromptfooRow, TypeError, ValueError) as exc:
        raise ReportInputError(f"{path}: not a Promptfoo results file (-o JSON): {exc}") from None
    return _info(data, path, rows), rows


def _info(data: Mapping[str, Any], path: Path, rows: list[Row]) -> EvalInfo:
    rows.sort(key=lambda row: (row.test_idx, row.prompt_idx))
    results = data["results"]
    config: Mapping[str, Any] = data["config"] if isinstance(data.get("config"), Mapping) else {}
    metadata: Mapping[str, Any] = data["metadata"] if isinstance(data.get("metadata"), Mapping) else {}
    return EvalInfo(
        eval_id=str(data.get("evalId") or path.stem),
        source=str(path),
        description=str(config.get("description") or ""),
        created_at=_seconds(metadata.get("evaluationCreatedAt") or results.get("timestamp")),
        finished=isinstance(results.get("stats"), Mapping),
        rows=len(rows),
        until_decided=_rounds(config.get("metadata")),
        **stamp_fields(stamp_of(data)),
    )


def _rounds(metadata: Any) -> Mapping[str, Any] | None:
    """The stamp ``--repeat-until-decided`` leaves in the config (``metadata.agentEvalsRounds``)."""
    found = metadata.get("agentEvalsRounds") if isinstance(metadata, Mapping) else None
    return found if isinstance(found, Mapping) else None


def _seconds(stamp: Any) -> str | None:
    """``2026-01-01T00:00:00.000Z`` as ``2026-01-01T00:00:00Z`` (the database's form)."""
    if not isinstance(stamp, str) or not stamp:
        return None
    return re.sub(r"\.\d+Z$", "Z", stamp)
