"""Synthetic shards: the results files a sharded run would write, as Promptfoo lays them out
(indented by two) with the shard's stamp, and the unsharded run they add up to."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agent_evals.shards.plan import PlannedCase, plan_shards
from agent_evals.suites.shard_spec import Shard
from agent_evals.shards.stamp import ShardStamp, stamp_results_file
from agent_evals.testing.promptfoo_results import Outcome, result_row, results_file

Outcomes = Callable[[str, int], Outcome]  # (case id, repeat index) → outcome


def cases(count: int) -> tuple[PlannedCase, ...]:
    return tuple(PlannedCase(f"C{n:02d}", f"C{n:02d} a synthetic case") for n in range(1, count + 1))


def _rows(chosen: Sequence[PlannedCase], repeat: int, outcome: Outcomes) -> list[dict[str, Any]]:
    rows = []
    for position, case in enumerate(chosen):
        for r in range(repeat):
            kind = outcome(case.id, r)
            failing = [("tool_sequence", f"{case.id} missed a step")] if kind == "fail" else []
            rows.append(result_row(case.id, position * repeat + r, kind, failing=failing,
                                   passing=("pull_request", "forbidden_tools")))
    return rows


def _metrics(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    named: dict[str, float] = {}
    for row in rows:
        for name, value in row["namedScores"].items():
            named[name] = named.get(name, 0) + value
    return {
        "score": sum(r["score"] for r in rows),
        "testPassCount": sum(r["failureReason"] == 0 for r in rows),
        "testFailCount": sum(r["failureReason"] == 1 for r in rows),
        "testErrorCount": sum(r["failureReason"] == 2 for r in rows),
        "totalLatencyMs": sum(r["latencyMs"] for r in rows),
        "tokenUsage": {"total": 10 * len(rows), "numRequests": len(rows)},
        "namedScores": named,
        "namedScoresCount": {name: sum(name in r["namedScores"] for r in rows) for name in named},
        "cost": 0.5 * len(rows),
    }


def write_file(path: Path, rows: list[dict[str, Any]], *, created: str, eval_id: str) -> Path:
    data = results_file(rows, eval_id=eval_id, created_at=created, description="tickets · replay")
    data["results"]["prompts"][0]["metrics"] = _metrics(rows)
    data["results"]["stats"]["tokenUsage"] = {"total": 10 * len(rows), "numRequests": len(rows)}
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def unsharded(folder: Path, count: int, repeat: int, outcome: Outcomes) -> Path:
    return write_file(folder / "tickets.json", _rows(cases(count), repeat, outcome),
                      created="2026-01-01T10:00:00.000Z", eval_id="eval-all-2026-01-01T10:00:00")


def shard_stamp(index: int, total: int, count: int, repeat: int, **changes: Any) -> ShardStamp:
    selected = cases(count)
    plan = tuple(tuple(p) for p in plan_shards(selected, total))
    fields: dict[str, Any] = dict(
        suite="tickets", shard=Shard(index, total), fingerprint="f" * 16, run_id=f"run-{index}", mode="replay",
        repeat=repeat, providers=1, selected=selected, plan=plan,
    )
    return ShardStamp(**{**fields, **changes})


def shard_files(folder: Path, total: int, count: int, repeat: int, outcome: Outcomes,
                only: Sequence[int] | None = None, mode: str = "replay") -> list[Path]:
    paths = []
    for index in only or range(1, total + 1):
        stamp = shard_stamp(index, total, count, repeat, mode=mode)
        rows = _rows(stamp.cases, repeat, outcome)
        path = write_file(folder / f"tickets.shard-{index}-of-{total}.json", rows,
                          created=f"2026-01-01T10:00:0{index}.000Z", eval_id=f"eval-s{index}-2026-01-01T10:00:0{index}")
        stamp_results_file(path, stamp)
        paths.append(path)
    return paths
