"""The heaviest test files are handed out first, so the suite's last minute is not one worker
alone with a long file (pytest-xdist's ``--dist loadfile`` gives files out in collection order).

The list is by measurement (seconds per file on 2 cores, ``./test.sh --durations=0``); a file
missing from it keeps its place after these. Order only: which tests run never changes.
"""

from __future__ import annotations

import pytest

HEAVIEST = (  # heaviest first
    "tests/report/test_ci_recipes.py",
    "tests/runner/test_lifecycle.py",
    "tests/runner/test_scale_e2e.py",
    "tests/runner/test_stranded.py",
    "tests/runner/test_sharing.py",
    "tests/golden/test_selfcheck.py",
    "tests/runner/test_runner_e2e.py",
    "tests/runner/test_interrupt_moments.py",
    "tests/live/test_promote.py",
    "tests/runner/test_traces.py",
    "tests/test_adding_a_case.py",
    "tests/runner/test_replay_all.py",
    "tests/live/test_chat.py",
    "tests/live/test_live_e2e.py",
    "tests/portal/test_server.py",
    "tests/runner/test_hints.py",
    "tests/runner/test_warm_workers.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: index for index, path in enumerate(HEAVIEST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(HEAVIEST)))  # stable
