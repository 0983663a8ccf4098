"""benchmarks/suite_cpu.py, the measure of the suite's CPU per test file, run on a small pytest session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from benchmarks.suite_cpu import by_file  # the project's folder is on sys.path (python -m pytest)
from tests.conftest import PROJECT_ROOT
from tests.schedule import load_durations


def test_the_cpu_of_the_processes_a_test_waits_for_is_counted_per_file(tmp_path: Path) -> None:
    tests = tmp_path / "probe"
    tests.mkdir()
    (tests / "test_busy.py").write_text(
        "import subprocess, sys\n"
        "def test_a_child_that_works():\n"
        "    subprocess.run([sys.executable, '-c', 'sum(range(20_000_000))'], check=True)\n"
        "def test_idle():\n"
        "    pass\n"
    )
    (tests / "test_idle.py").write_text("def test_nothing():\n    pass\n")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "benchmarks.suite_cpu", "-p", "no:cacheprovider", "--rootdir",
         str(tests), str(tests)], cwd=PROJECT_ROOT, env={**os.environ, "TEST_CPU_DIR": str(out)},
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {row["file"]: row for row in by_file(out)}
    assert set(rows) == {"test_busy.py", "test_idle.py"}, rows
    assert rows["test_busy.py"]["tests"] == 2 and rows["test_busy.py"]["cpu_s"] > rows["test_busy.py"]["own_s"]
    assert rows["test_busy.py"]["cpu_s"] > rows["test_idle.py"]["cpu_s"]
    shown = subprocess.run([sys.executable, "benchmarks/suite_cpu.py", "--folder", str(out)], cwd=PROJECT_ROOT,
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and shown.stdout.splitlines()[2].endswith("test_busy.py"), shown.stdout
    durations = tmp_path / "durations.json"  # what tests/schedule.py orders the files by
    written = subprocess.run([sys.executable, "benchmarks/suite_cpu.py", "--folder", str(out), "--write-durations",
                              str(durations)], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert written.returncode == 0, written.stderr
    assert load_durations(durations) == {name: row["wall_s"] for name, row in rows.items()}

