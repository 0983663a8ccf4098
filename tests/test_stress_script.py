"""scripts/stress-tests.sh, on a small selection so it cannot rot: it runs the tests under a CPU
hog, says how each run went, fails when a run fails, and takes its hog with it."""

from __future__ import annotations

import re
import subprocess
import uuid
from pathlib import Path

from tests.conftest import PROJECT_ROOT, clean_env
from tests.leftovers import processes_with

SCRIPT = PROJECT_ROOT / "scripts" / "stress-tests.sh"


def _stress(tmp_path: Path, runs: int, *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    mark = uuid.uuid4().hex
    env = {**clean_env(), "STRESS_LOG_DIR": str(tmp_path / "logs"), "AGENT_EVALS_STRESS_MARK": mark,
           "STRESS_HOGS": "1",  # one busy loop: the tests beside this one need the other CPU
           "TEST_WORKERS": "1"}  # ./test.sh's one xdist worker for a one-file selection (not one per CPU + 1)
    done = subprocess.run([str(SCRIPT), "--runs", str(runs), *args], env=env, cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=600)
    return done, mark


def test_a_passing_selection_passes_every_run_under_load(tmp_path: Path) -> None:
    done, mark = _stress(tmp_path, 2, "tests/test_processes.py")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "stress: 2 run(s) of ./test.sh tests/test_processes.py beside 1 busy loop(s)"
    assert [line.split(":")[0] for line in lines[1:3]] == ["run 1/2", "run 2/2"]
    assert all(re.search(r" passed \(\d+ passed in ", line) for line in lines[1:3]), lines
    assert lines[-1] == "stress: 2 of 2 run(s) passed under load"
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["run-1.log", "run-2.log"]
    assert processes_with("AGENT_EVALS_STRESS_MARK", mark) == []  # the busy loops went with it


def test_a_failing_test_fails_the_stress_run_and_is_named(tmp_path: Path) -> None:
    failing = tmp_path / "test_always_fails.py"
    failing.write_text("def test_always_fails():\n    assert False\n")
    done, mark = _stress(tmp_path, 1, str(failing))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "run 1/1: FAILED, exit 1" in done.stdout and "test_always_fails" in done.stdout, done.stdout
    assert done.stdout.splitlines()[-1] == "stress: 0 of 1 run(s) passed under load"
    assert processes_with("AGENT_EVALS_STRESS_MARK", mark) == []


def test_help_says_how_to_use_it_and_runs_nothing(tmp_path: Path) -> None:
    env = {**clean_env(), "STRESS_LOG_DIR": str(tmp_path / "logs")}
    done = subprocess.run([str(SCRIPT), "--help"], env=env, cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "scripts/stress-tests.sh --runs 2 tests/runner/test_lifecycle.py" in done.stdout
    assert "stress:" not in done.stdout and not (tmp_path / "logs").exists()
