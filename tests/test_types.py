"""The type check of src/ (mypy, with the settings of pyproject.toml's [tool.mypy]): clean, or the test
fails with mypy's report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

COMMAND = [sys.executable, "-m", "mypy"]  # the packages, the cache and the settings: from pyproject.toml


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=280)


def test_src_type_checks_clean() -> None:
    done = _mypy()
    if "No module named mypy" in done.stderr:
        pytest.fail("mypy is not installed: scripts/setup.sh installs the dev extras (pip install -e '.[dev]')")
    assert done.returncode == 0, f"mypy found type errors in src/ (run: {' '.join(COMMAND)}):\n{done.stdout}{done.stderr}"
    assert done.stdout.startswith("Success: no issues found")
    assert not (PROJECT_ROOT / ".mypy_cache").exists()  # the cache is in the venv (cache_dir)


def test_the_check_fails_on_a_type_error(tmp_path: Path) -> None:
    """Where it must fail: the same settings on a module with an error (a word outside a closed vocabulary)."""
    (tmp_path / "bad.py").write_text(
        "from agent_evals.record import End\n\nEnd('finished')\n", encoding="utf-8")
    done = _mypy("--cache-dir", str(tmp_path / "cache"), str(tmp_path / "bad.py"))
    assert done.returncode == 1
    assert 'bad.py:3: error: Argument 1 to "End" has incompatible type "Literal[\'finished\']"' in done.stdout
