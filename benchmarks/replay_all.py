"""Wall time and CPU of `npm run eval -- all --replay` on this machine, and where the time goes.

Runs ``agent-evals run all --replay -j J`` as a user does (the runner, its portals, Promptfoo and
its Python workers; no model) and reports the wall time, the CPU of everything the run started,
the Python processes Promptfoo started (cold ones counted through a shim given to it as its
interpreter, warm ones by the run's warm server) and each suite's own time from the runner's
summary lines. ``--suites A B …`` runs only those
suites (through a project copy whose evals/ holds only them, everything else linked), e.g. the
three suites the issue's target was set for:

    .venv/bin/python benchmarks/replay_all.py [--jobs 4]
    .venv/bin/python benchmarks/replay_all.py --suites spoke-create spoke-qa spoke-create-overlay
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent_evals.paths import project_root

sys.path.insert(0, str(Path(__file__).resolve().parent))
from python_starts import children_cpu, counting_python, python_starts  # noqa: E402

KEEP = ("PATH", "HOME", "LANG", "TMPDIR")
SUITE_LINE = re.compile(r"^([\w-]+): (\d+) passed, (\d+) failed, (\d+) error\(s\).* in (\d+) s; eval ")


def project_with(suites: list[str], root: Path) -> Path:
    """A project whose evals/ holds only ``suites``: every other entry links to this project."""
    home = root / "project"
    home.mkdir()
    for entry in project_root().iterdir():
        if entry.name not in ("evals", ".git"):
            (home / entry.name).symlink_to(entry)
    (home / "evals").mkdir()
    for item in (project_root() / "evals").iterdir():
        if item.is_file() or item.name in suites:
            (home / "evals" / item.name).symlink_to(item)
    order = home / "evals" / "order.txt"
    if order.exists():
        order.unlink()
        order.write_text("\n".join(suites) + "\n")
    return home


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--suites", nargs="+", help="only these suites (default: all)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shim, counter = counting_python(root)
        env = {k: v for k, v in os.environ.items() if k in KEEP}
        env.update(AGENT_EVALS_DATA_DIR=str(root / "data" / "portal"), PROMPTFOO_CONFIG_DIR=str(root / "promptfoo"),
                   PROMPTFOO_PYTHON=str(shim), PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1")
        cwd = project_root()
        if args.suites:
            cwd = project_with(args.suites, root)
            env["AGENT_EVALS_HOME"] = str(cwd)
        command = [sys.executable, "-m", "agent_evals.cli", "run", "all", "--replay", "-j", str(args.jobs)]
        cpu_before = children_cpu()
        started = time.perf_counter()
        done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
        wall = time.perf_counter() - started
        cpu = children_cpu() - cpu_before
        if done.returncode != 0:
            print(done.stdout[-3000:] + done.stderr[-2000:], file=sys.stderr)
        cold, warm = python_starts(counter, root / "data" / "runs")
    suites = [m.groups() for m in map(SUITE_LINE.match, done.stdout.splitlines()) if m]
    rows = sum(int(p) + int(f) + int(e) for _, p, f, e, _ in suites)
    print(f"{'all' if not args.suites else ' '.join(args.suites)} --replay -j {args.jobs}, {os.cpu_count()} cores: "
          f"{wall:.1f} s wall, {cpu:.1f} s CPU, exit {done.returncode}, {rows} rows")
    print(f"  Python processes started by Promptfoo: {cold + warm} ({(cold + warm) / max(rows, 1):.2f} per row; "
          f"{warm} forked warm, {cold} cold)")
    for name, passed, failed, errors, seconds in suites:
        print(f"  {name:<24} {int(passed) + int(failed) + int(errors):>3} rows  {seconds:>3} s")
    suite_time = sum(int(s[4]) for s in suites)
    print(f"  the suites' own times add up to {suite_time} s in a run of {wall:.1f} s (suites side by side, "
          "plus the check, the portals and the report)")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
