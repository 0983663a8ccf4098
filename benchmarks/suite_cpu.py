"""Where the test suite's CPU goes, per test file: the measure of issue #23 (the suite is CPU-bound on 2 cores).

A pytest plugin records, for every test, the CPU of the pytest process and of the processes it
waited for (``RUSAGE_CHILDREN``: the runners, Promptfoo, portals and servers a test starts and
reaps), and its wall time; each xdist worker writes its rows to ``$TEST_CPU_DIR`` (default
``results/test-cpu``). Then this module, run as a script, sums them by file, costliest first:

    rm -rf results/test-cpu && ./test.sh -q -p benchmarks.suite_cpu
    .venv/bin/python benchmarks/suite_cpu.py --top 30

``--write-durations tests/durations.json`` also writes each file's wall time, the order in which
``./test.sh`` hands the files to its workers (``tests/schedule.py``).

A process a test leaves to someone else to reap (a daemon that outlives its parent) is not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

FOLDER_ENV = "TEST_CPU_DIR"
DEFAULT_FOLDER = Path(__file__).resolve().parents[1] / "results" / "test-cpu"
_rows: list[tuple[str, float, float, float]] = []


def _folder() -> Path:
    return Path(os.environ.get(FOLDER_ENV) or DEFAULT_FOLDER)


def _cpu() -> tuple[float, float]:
    own, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, waited.ru_utime + waited.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    own, waited = _cpu()
    started = time.monotonic()
    yield
    own_after, waited_after = _cpu()
    _rows.append((item.nodeid, own_after - own, waited_after - waited, time.monotonic() - started))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not _rows:
        return
    folder = _folder()
    folder.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (folder / f"rows-{worker}.json").write_text(json.dumps(_rows), encoding="utf-8")


def by_file(folder: Path) -> list[dict[str, Any]]:
    """The rows of every worker summed per test file, the costliest (own + waited-for CPU) first."""
    totals: dict[str, dict[str, Any]] = defaultdict(lambda: {"cpu_s": 0.0, "own_s": 0.0, "wall_s": 0.0, "tests": 0})
    for path in sorted(folder.glob("rows-*.json")):
        for nodeid, own, waited, wall in json.loads(path.read_text(encoding="utf-8")):
            entry = totals[nodeid.split("::")[0]]
            entry["cpu_s"] += own + waited
            entry["own_s"] += own
            entry["wall_s"] += wall
            entry["tests"] += 1
    rows = [{"file": name, **{k: round(v, 1) if isinstance(v, float) else v for k, v in entry.items()}}
            for name, entry in totals.items()]
    return sorted(rows, key=lambda row: -row["cpu_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=_folder())
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--write-durations", type=Path, metavar="FILE",
                        help="write each file's wall time there (tests/durations.json: the order of ./test.sh's files)")
    args = parser.parse_args()
    rows = by_file(args.folder)
    if not rows:
        raise SystemExit(f"no rows in {args.folder}: run the tests with -p benchmarks.suite_cpu first")
    if args.write_durations:
        durations = {row["file"]: row["wall_s"] for row in sorted(rows, key=lambda row: row["file"])}
        args.write_durations.write_text(json.dumps(durations, indent=1) + "\n", encoding="utf-8")
    total = sum(row["cpu_s"] for row in rows)
    print(f"{sum(row['tests'] for row in rows)} tests, {total:.0f} s of CPU (own and waited-for processes)")
    print(f"{'cpu s':>7} {'share':>6} {'wall s':>7} {'tests':>5}  file")
    for row in rows[: args.top]:
        print(f"{row['cpu_s']:7.1f} {row['cpu_s'] / total:6.1%} {row['wall_s']:7.1f} {row['tests']:5d}  {row['file']}")


if __name__ == "__main__":
    main()
