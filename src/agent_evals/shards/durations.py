"""How long each case took before: seconds per run, by case id, from a stored report
(``agent-evals report --format json``, its ``cases[].mean_latency_ms``), for
``agent-evals run … --shard I/N --shard-durations report.json``. A case with several
providers runs once per provider: their times add up."""

from __future__ import annotations

from pathlib import Path

from agent_evals.suites.shard_spec import ShardError
from agent_evals.report.errors import ReportInputError
from agent_evals.report.promptfoo_json import read_json


def read_durations(path: Path) -> dict[str, float]:
    """``{case id: seconds}``; a file that is not a report raises a one-line :class:`ShardError`."""
    from agent_evals.report.format_json import is_report_json  # lazy: keeps agent_evals.golden.record's start-up as small as it is

    try:
        data = read_json(Path(path))
    except ReportInputError as exc:
        raise ShardError(f"--shard-durations {exc}") from None
    if not is_report_json(data) or not isinstance(data.get("cases"), list):
        raise ShardError(
            f"--shard-durations {path}: not an agent-evals report (write one with "
            "`npm run report -- … --format json -o report.json`)"
        )
    seconds: dict[str, float] = {}
    for case in data["cases"]:
        latency = case.get("mean_latency_ms") if isinstance(case, dict) else None
        if isinstance(latency, int | float) and not isinstance(latency, bool) and latency >= 0:
            seconds[str(case["id"])] = seconds.get(str(case["id"]), 0.0) + latency / 1000
    return seconds
