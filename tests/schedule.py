"""The order test files reach the workers: the longest first, so that no long one starts last.

``./test.sh`` runs whole files per worker (``--dist loadfile``); a worker takes the next file when
it is almost done with its own. pytest-xdist orders the files by their number of tests, most
first, so its longest files (one end-to-end test that replays every suite, 20 to 30 s) came last,
and the suite ended with one worker busy and two idle (about 30 s of a 340 s run). Here the files
go out in the order of the wall time they took (``tests/durations.json``: the longest-processing-
time-first rule), and a file it does not know yet goes first (as if it were the longest: a new
file must never be the one that makes a tail). The file is written by
``benchmarks/suite_cpu.py --write-durations tests/durations.json`` after a measured run; a stale
entry only orders the files less well. ``TEST_DURATIONS=<file>`` reads another one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

DURATIONS = Path(__file__).resolve().parent / "durations.json"
DURATIONS_ENV = "TEST_DURATIONS"


def load_durations(path: Path | None = None) -> dict[str, float]:
    """Seconds of wall time per test file (its path from pytest's root folder), or none."""
    path = path or Path(os.environ.get(DURATIONS_ENV) or DURATIONS)
    try:
        return {str(name): float(seconds) for name, seconds in json.loads(path.read_text(encoding="utf-8")).items()}
    except FileNotFoundError:
        return {}


def longest_first(files: Iterable[str], seconds: Mapping[str, float]) -> list[str]:
    """``files`` (each once, in their first order), the unknown ones first, then the longest first;
    files of the same duration keep their order."""
    unique = list(dict.fromkeys(files))
    return sorted(unique, key=lambda name: (name in seconds, -seconds.get(name, 0.0)))


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist: keep the order given here
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: index for index, name in enumerate(longest_first(map(_file, items), load_durations()))}
    items.sort(key=lambda item: rank[_file(item)])  # stable: a file's tests keep their order
