"""tests/schedule.py: the longest test files reach the workers first, the unknown ones before them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import PROJECT_ROOT
from tests.schedule import DURATIONS, DURATIONS_ENV, load_durations, longest_first


def test_unknown_files_first_then_the_longest_and_ties_keep_their_order() -> None:
    seconds = {"a.py": 1.0, "b.py": 30.0, "c.py": 1.0, "d.py": 0.0}
    files = ["a.py", "a.py", "b.py", "new.py", "c.py", "d.py", "other.py"]
    assert longest_first(files, seconds) == ["new.py", "other.py", "b.py", "a.py", "c.py", "d.py"]
    assert longest_first([], seconds) == []


def test_the_durations_read_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    path.write_text(json.dumps({"tests/x.py": 2, "tests/y.py": 0.5}))
    assert load_durations(path) == {"tests/x.py": 2.0, "tests/y.py": 0.5}
    assert load_durations(tmp_path / "missing.json") == {}
    recorded = load_durations(DURATIONS)  # the project's own, keyed as pytest names the files (from the root)
    assert recorded and all(name.startswith("tests/") and name.endswith(".py") for name in recorded)
    assert (PROJECT_ROOT / max(recorded, key=recorded.__getitem__)).is_file()  # the longest one is still there


def test_xdist_workers_take_the_files_in_this_order(tmp_path: Path) -> None:
    """One worker takes the files as they are queued: without the plugin pytest-xdist queues the file
    with the most tests first (a, c, b); with it, the unknown one, then the longest (c, b, a)."""
    probe = tmp_path / "probe"
    probe.mkdir()
    for name, count in {"test_a.py": 3, "test_b.py": 1, "test_c.py": 2}.items():
        (probe / name).write_text("".join(f"def test_{n}():\n    pass\n" for n in range(count)))
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"test_a.py": 1.0, "test_b.py": 9.0}))

    def order(*plugin: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-v", "-n", "1", "--dist", "loadfile", *plugin, "-p", "no:cacheprovider",
             "--rootdir", str(probe), str(probe)],
            cwd=PROJECT_ROOT, env={**os.environ, DURATIONS_ENV: str(durations)}, capture_output=True, text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return list(dict.fromkeys(re.findall(r"PASSED \S*/(test_\w)\.py", done.stdout)))

    assert order() == ["test_a", "test_c", "test_b"]
    assert order("-p", "tests.schedule") == ["test_c", "test_b", "test_a"]
