"""``agent-evals regrade`` of a 1,000-row eval, without a judge: wall time and peak memory.

The rows (``--rows``, default 1,000: 200 cases × 5 repeats) are graded by the kit's own core
checks as a suite run stores them (:mod:`agent_evals.testing.kit_rows`: six checks a row, the
fast form, ``metadata.checks`` with grader stamps; ``--row-kb`` of transcript each, default 8),
stored in a real Promptfoo results database with ``promptfoo import``. Timed, in a fresh
process: ``agent-evals regrade <eval id>`` — read the eval from the database, grade every row
again, write the new eval and import it beside the old one. Target: under 10 s.

    .venv/bin/python benchmarks/regrade_speed.py [--rows 1000] [--row-kb 8]

Exit status 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent_evals.runner.promptfoo_process import promptfoo_command, promptfoo_env
from agent_evals.testing.kit_rows import kit_row
from agent_evals.testing.promptfoo_results import results_file

TARGET_S = 10.0
EVAL_ID = "eval-regrade-2026-01-01T00:00:00"
CHECKS = [
    ("tool_sequence", {"expected": ["get_item", "open_ticket"]}, "tool_sequence"),
    ("tool_not_executed", {"tools": ["delete_*"]}, "forbidden_tools"),
    ("argument_match", {"tool": "open_ticket", "args": {"queue": "billing"}}, "argument_match"),
    ("function_call_metrics", {"expected_calls": [{"name": "get_item"}, {"name": "open_ticket"}]}, "function_calls"),
    ("conversation", {"max_turns": 4}, "conversation"),
    ("reply_contains", {"all": ["Done"]}, "key_facts"),
]


def build(folder: Path, rows: int, row_kb: int) -> Path:
    items = []
    for index in range(rows):
        queue = "billing" if index % 7 else "it"  # one row in seven fails argument_match
        items.append(kit_row(f"C{index // 5:03d}", index, CHECKS, padding=row_kb * 1024,
                             tool_calls=(("get_item", {"id": index}), ("open_ticket", {"queue": queue}))))
    path = folder / "old.json"
    path.write_text(json.dumps(results_file(items, eval_id=EVAL_ID), indent=2), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--row-kb", type=int, default=8)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="regrade-bench-") as tmp:
        folder = Path(tmp)
        env = promptfoo_env({**os.environ, "PROMPTFOO_CONFIG_DIR": str(folder / "promptfoo"),
                             "AGENT_EVALS_DATA_DIR": str(folder / "data" / "portal")})
        started = time.monotonic()
        source = build(folder, args.rows, args.row_kb)
        done = subprocess.run(promptfoo_command("import", str(source)), env=env, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stdout + done.stderr)
            return 1
        print(f"{args.rows} rows ({source.stat().st_size / 1e6:.1f} MB) built and imported in "
              f"{time.monotonic() - started:.1f} s")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "agent_evals.cli", "regrade", EVAL_ID, "-o",
                               str(folder / "new.json")], env=env, cwd=folder, capture_output=True, text=True)
        elapsed = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        print(done.stdout.strip() or done.stderr.strip())
        print(f"regrade of {args.rows} rows: {elapsed:.2f} s wall, {cpu:.2f} s CPU (read, grade, write, and "
              f"Promptfoo's import); peak {after.ru_maxrss / 1024:.0f} MB; target under {TARGET_S:.0f} s; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
        return 0 if done.returncode == 0 and elapsed < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
