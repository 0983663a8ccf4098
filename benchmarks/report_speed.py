"""``agent-evals report`` over 20,000 synthetic rows: wall time and peak memory.

The rows (``--cases`` × ``--repeats``, default 2,000 × 10) look like the kit's: a run record
with tool calls and their results, a transcript, an end-state snapshot holding a schema
(``--row-kb`` sets the size, default 24 KB as replayed kit rows of this size go), assertion
entries with the kit's reasons, failures (one case in five flaky, one in ten failing), errors
(one row in fifty) and rows not graded. They are stored

* in a real Promptfoo results database: its schema from ``promptfoo import`` of a small
  file, the rows inserted with SQLite as Promptfoo stores them; timed: ``report latest``;
* in an ``-o`` JSON file, indented as Promptfoo writes it, of ``--json-row-kb`` per row
  before indenting (default 4 KB, a file of about 250 MB: Promptfoo's ``JSON.stringify``
  cannot build much more, V8 strings end at 512 MB); timed: ``report FILE.json``.

Each command runs in a fresh process (interpreter start included); peak memory is its
maximum RSS. Targets: under 3 s and under 300 MB each.

    .venv/bin/python benchmarks/report_speed.py [--cases 2000] [--repeats 10] [--row-kb 24]

Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
AGENT_EVALS = [sys.executable, "-m", "agent_evals.cli"]
TARGET_S, TARGET_MB = 3.0, 300
EVAL_ID = "eval-bench-2026-01-01T00:00:00"

DIFF = (
    "input_diff: 0 of 1 expected change(s) made, 1 unexpected change(s) (submitted: create_spoke_pull_request "
    "call 3, turn 2, the only call with a configuration; source: spoke 'crm-dev-neu' from the portal)\n"
    'unexpected changes (- removed, + added, ~ changed):\n  + /addressSpace/1: "10.1.0.0/24"\n'
    'wrong values:\n  /addressSpace/0: expected "10.1.0.0/22", got "10.9.0.0/22"'
)
SEQUENCE = (
    "tool_sequence in_order: expected get_spoke → validate_spoke_config → create_spoke_pull_request; actual "
    "get_spoke, create_spoke_pull_request; missing validate_spoke_config after get_spoke (position 2)"
)


def rows(cases: int, repeats: int, row_kb: int) -> Iterator[dict[str, Any]]:
    from agent_evals.testing.promptfoo_results import result_row

    passing = [
        "forbidden_tools",
        "pull_request",
        "tool_sequence",
        "argument_match",
        "input_diff",
        "conversation",
    ]
    tools = ("get_spoke", "get_spoke_schema", "validate_spoke_config", "create_spoke_pull_request")
    for case in range(cases):
        case_id, group = f"C{case:04d}", ("copy", "new", "blocked", "qa")[case % 4]
        for repeat in range(repeats):
            index = case * repeats + repeat
            kind = (
                "error"
                if index % 50 == 7
                else "fail"
                if (case % 10 == 3 or (case % 5 == 1 and repeat % 2))
                else "pass"
            )
            failing = [("input_diff", DIFF), ("tool_sequence", SEQUENCE)] if kind == "fail" else []
            row = result_row(
                case_id,
                index,
                kind,
                group=group,
                priority="smoke" if case % 3 == 0 else "full",
                passing=[m for m in passing if kind == "pass" or m not in ("input_diff", "tool_sequence")],
                failing=failing,
                tool_calls=tools,
                padding=0,
                not_graded=["llm-rubric (rubric): no grader"] if group == "qa" else (),
                named_scores={"expected_changes_made": 1.0, "no_collateral_changes": 1.0, "reliability": 0.9}
                if kind == "pass"
                else None,
            )
            _pad(row, row_kb * 1024)
            yield row


def _pad(row: dict[str, Any], size: int) -> None:
    """Tool results and a snapshot schema until the row is about ``size`` bytes of JSON."""
    record = row["response"]["metadata"]
    missing = size - len(json.dumps(row))
    if missing > 0:
        record["snapshot"]["resources"]["schema"] = {"description": "s" * (missing // 2)}
        record["tool_calls"][1]["result"] = {"schema": {"description": "t" * (missing - missing // 2)}}


def make_database(folder: Path, cases: int, repeats: int, row_kb: int) -> Path:
    """A Promptfoo database with its real schema (``promptfoo import``) and the rows inserted."""
    from agent_evals.runner.promptfoo_process import promptfoo_command, promptfoo_env
    from agent_evals.testing.promptfoo_results import result_row, results_file

    folder.mkdir(parents=True, exist_ok=True)
    seed = folder / "seed.json"
    seed.write_text(json.dumps(results_file([result_row("C0", 0)], eval_id=EVAL_ID)))
    env = promptfoo_env()
    env["PROMPTFOO_CONFIG_DIR"] = str(folder)
    subprocess.run(promptfoo_command("import", str(seed)), env=env, check=True, capture_output=True)
    db = folder / "promptfoo.db"
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM eval_results WHERE eval_id = ?", (EVAL_ID,))
        con.executemany(
            "INSERT INTO eval_results (id, created_at, updated_at, eval_id, prompt_idx, test_idx, test_case, prompt,"
            " prompt_id, provider, latency_ms, cost, response, error, success, score, grading_result, named_scores,"
            " metadata, failure_reason) VALUES (?, 0, 0, ?, 0, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)",
            (_columns(row) for row in rows(cases, repeats, row_kb)),
        )
    return db


def _columns(row: dict[str, Any]) -> tuple[Any, ...]:
    grading = row["gradingResult"]
    return (
        str(uuid.uuid4()),
        EVAL_ID,
        row["testIdx"],
        json.dumps(row["testCase"]),
        json.dumps(row["prompt"]),
        row["promptId"],
        json.dumps(row["provider"]),
        row["latencyMs"],
        json.dumps(row["response"]),
        row.get("error"),
        int(row["success"]),
        row["score"],
        json.dumps(grading) if grading else None,
        json.dumps(row["namedScores"]),
        json.dumps(row["metadata"]),
        row["failureReason"],
    )


def make_file(folder: Path, cases: int, repeats: int, row_kb: int) -> Path:
    from agent_evals.testing.promptfoo_results import results_file

    path = folder / "results.json"
    data = results_file(rows(cases, repeats, row_kb), eval_id="eval-bench-file")
    path.write_text(json.dumps(data, indent=2))  # as Promptfoo writes it
    return path


def measure(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds and peak RSS (MB) of ``command`` in a fresh process, and its first line."""
    probe = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter(); done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "wall = time.perf_counter() - t\n"
        "print(wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.returncode)\n"
        "print((done.stdout or done.stderr).splitlines()[0] if (done.stdout or done.stderr) else '')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, *command], env=env, capture_output=True, text=True, check=True
    )
    numbers, first = out.stdout.splitlines()[:2]
    wall, rss_kb, code = numbers.split()
    if code != "0":
        raise SystemExit(f"{' '.join(command)} exited {code}: {first}")
    return float(wall), int(rss_kb) / 1024, first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--row-kb", type=int, default=24)
    parser.add_argument("--json-row-kb", type=int, default=4)
    args = parser.parse_args()
    total = args.cases * args.repeats
    ok = True
    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        db = make_database(folder / "promptfoo", args.cases, args.repeats, args.row_kb)
        results = make_file(folder, args.cases, args.repeats, args.json_row_kb)
        print(
            f"setup: {total} rows in the database ({db.stat().st_size / 1e6:.0f} MB, about {args.row_kb} KB a row) "
            f"and in {results.name} ({results.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - started:.1f} s"
        )
        import os

        env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(folder / "promptfoo")}
        for label, command in (
            ("report latest (database)", [*AGENT_EVALS, "report", "latest"]),
            (
                "report latest --format json",
                [*AGENT_EVALS, "report", "latest", "--format", "json", "-o", str(folder / "r.json")],
            ),
            ("report FILE.json", [*AGENT_EVALS, "report", str(results)]),
        ):
            wall, rss, first = measure(command, env)
            held = wall < TARGET_S and rss < TARGET_MB
            ok &= held
            print(
                f"{label}: {wall:.2f} s, peak RSS {rss:.0f} MB (targets < {TARGET_S:.0f} s, < {TARGET_MB} MB): "
                f"{'ok' if held else 'MISSED'}  [{first[:60]}]"
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
