"""``agent-evals merge`` over 1,000 rows: the merge's own time, and the import into the viewer.

Four shards' results files (``--rows`` in all, default 1,000: 250 cases × 4 repeats), each row
``--row-kb`` of JSON (default 140 KB, as the kit's replayed rows of spoke-create measure:
transcripts, tool results and the end-state snapshot), indented as Promptfoo writes them and
stamped as ``agent-evals run --shard`` stamps them. Timed:

- the merge's own time: checking the stamps, re-indexing and writing the merged eval
  (:func:`agent_evals.shards.merge.merge_shards`, in this process);
- ``agent-evals merge --no-import`` in a fresh process (interpreter start included);
- ``promptfoo import`` of the merged file (Promptfoo's own time, not the merge's).

Target: the merge's own time under 2 s. Exit status 1 when it is missed.

    .venv/bin/python benchmarks/merge_speed.py [--rows 1000] [--row-kb 140]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.shards.synthetic: the synthetic shards the merge tests use

TARGET_S = 2.0
SHARDS, REPEATS = 4, 4


def _pad(row: dict[str, Any], size: int) -> None:
    missing = size - len(json.dumps(row))
    if missing > 0:
        row["response"]["metadata"]["transcript"] = "t" * missing


def write_shards(folder: Path, rows: int, row_kb: int) -> list[Path]:
    from agent_evals.shards.stamp import stamp_results_file
    from tests.shards import synthetic

    cases = rows // REPEATS
    paths = []
    for index in range(1, SHARDS + 1):
        stamp = synthetic.shard_stamp(index, SHARDS, cases, REPEATS)
        shard_rows = synthetic._rows(stamp.cases, REPEATS, lambda case, r: "fail" if r == 1 else "pass")
        for row in shard_rows:
            _pad(row, row_kb * 1024)
        path = synthetic.write_file(folder / f"tickets.shard-{index}-of-{SHARDS}.json", shard_rows,
                                    created=f"2026-01-01T10:00:0{index}.000Z", eval_id=f"eval-s{index}")
        stamp_results_file(path, stamp)
        paths.append(path)
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--row-kb", type=int, default=140)
    args = parser.parse_args()
    from agent_evals.runner.promptfoo_process import promptfoo_command, promptfoo_env
    from agent_evals.shards.merge import check_shards, merge_shards, read_shard_files

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = write_shards(folder, args.rows, args.row_kb)
        size_mb = sum(f.stat().st_size for f in files) / 1e6
        started = time.perf_counter()
        merged = merge_shards(check_shards(read_shard_files(files)), folder / "merged.json")
        own = time.perf_counter() - started
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "agent_evals.cli", "merge", *map(str, files), "-o",
                        str(folder / "again.json"), "--no-import"], check=True, capture_output=True)
        command = time.perf_counter() - started
        env = {**promptfoo_env(), "PROMPTFOO_CONFIG_DIR": str(folder / "promptfoo")}
        started = time.perf_counter()
        done = subprocess.run(promptfoo_command("import", str(merged.path)), env=env, capture_output=True, text=True)
        imported = time.perf_counter() - started
        assert done.returncode == 0, done.stdout + done.stderr
    print(f"{merged.rows} rows in {SHARDS} shards, {size_mb:.0f} MB of results files ({args.row_kb} KB a row)")
    print(f"merge, its own time:              {own:6.2f} s   (target < {TARGET_S:g} s)")
    print(f"agent-evals merge --no-import:     {command:6.2f} s   (a fresh process)")
    print(f"promptfoo import of the merged eval: {imported:6.2f} s   (Promptfoo's time)")
    return 0 if own < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
