"""The live benchmarks run (small, so the test stays short; no timing is asserted: the numbers are the
benchmarks' business, see docs/live.md#performance)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import PROJECT_ROOT, clean_env

RUNS = [
    (["live_scoring.py", "--conversations", "80", "--jobs", "2"], "scoring 80 conversations (read, score, eval file, report): "),
    (["live_selection.py", "--conversations", "4000", "--repeat", "1"], "  1 day, 1 agent "),
    (["live_chat_overhead.py", "--turns", "10"], "postgresql: storing median "),
]


@pytest.mark.parametrize(("args", "shown"), RUNS, ids=[r[0][0] for r in RUNS])
def test_a_live_benchmark_runs(args: list[str], shown: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(PROJECT_ROOT / "benchmarks" / args[0]), *args[1:]], cwd=PROJECT_ROOT,
                          env={**clean_env(), "TMPDIR": str(tmp_path)}, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: a target missed on a busy machine
    assert shown in done.stdout, done.stdout
