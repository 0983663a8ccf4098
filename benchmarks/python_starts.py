"""Counting the Python processes a run starts, cold and warm (shared by the harness benchmarks).

A counting interpreter given to the runner as ``PROMPTFOO_PYTHON`` sees every process that
starts cold (the runner hands it on to its warm launcher as the interpreter for those); the
run's warm server writes how many it forked to ``warm-workers.json`` in the run's folder.
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

SHIM = """#!/bin/sh
echo x >> "{counter}"
exec "{python}" "$@"
"""


def counting_python(folder: Path, name: str = "python") -> tuple[Path, Path]:
    """A ``python`` that counts its starts: (the interpreter, its counter file)."""
    counter = folder / f"{name}.count"
    counter.write_text("")
    shim = folder / name
    shim.write_text(SHIM.format(counter=counter, python=sys.executable))
    shim.chmod(0o755)
    return shim, counter


def python_starts(counter: Path, runs: Path) -> tuple[int, int]:
    """(cold, warm) starts: the counter's lines, and the forks every run under ``runs`` recorded."""
    cold = len(counter.read_text().split())
    warm = sum(sum(json.loads(path.read_text())["started"].values()) for path in runs.glob("*/warm-workers.json"))
    return cold, warm


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
