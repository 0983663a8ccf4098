"""The session's temporary folder (tests/leftovers.py) goes with a pytest that ran no test: ``--help``, no
session at all; a path that does not exist; a selection of none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT, clean_env


@pytest.mark.parametrize(("args", "code"), [(["--help"], 0), (["--markers"], 0), (["tests/no_such_file.py"], 4),
                                            (["tests/test_schedule.py", "-k", "no_such_test"], 5)],
                         ids=["help", "markers", "no-such-file", "no-test-selected"])
def test_a_pytest_that_runs_no_tests_leaves_no_folder(tmp_path: Path, args: list[str], code: int) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**clean_env(), "TMPDIR": str(temp)}
    env.pop("AGENT_EVALS_TEST_TMPDIR", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=PROJECT_ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == code, done.stdout[-2000:] + done.stderr[-2000:]
    assert list(temp.iterdir()) == []  # the session's agent-evals-tests-* folder was made, then removed
