"""Wall time of `npm run eval -- all --replay` (target: below 2 minutes on 2 cores), and
where the time goes: Promptfoo start, portal start, the conversations (provider calls:
agent loop, MCP, git), and the Python processes Promptfoo starts per assertion and hook.

    .venv/bin/python benchmarks/replay_all.py [--jobs 4]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent_evals.paths import project_root
from agent_evals.portal.process import PortalProcess
from agent_evals.runner.run import promptfoo_command, promptfoo_env
from agent_evals.runner.suites import discover

KEEP = ("PATH", "HOME", "LANG", "TMPDIR")
SUITES = tuple(suite.name for suite in discover())


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in KEEP}
    env.update(AGENT_EVALS_DATA_DIR=str(root / "data"), PROMPTFOO_CONFIG_DIR=str(root / "promptfoo"))
    return env


def promptfoo_start(root: Path) -> float:
    """`promptfoo eval` of a one-row echo config: Promptfoo's own start and finish."""
    config = root / "echo.yaml"
    config.write_text("prompts: ['hi']\nproviders: [echo]\ntests: [{vars: {}}]\n")
    env = promptfoo_env(_env(root))
    times = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(promptfoo_command("eval", "-c", str(config), "--no-cache"), env=env, cwd=root,
                       capture_output=True, check=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def python_process(root: Path) -> float:
    """One assertion call as Promptfoo makes it: a fresh interpreter running Promptfoo's
    wrapper.py on an assertion file (tool_sequence, with a small context)."""
    wrapper = project_root() / "node_modules" / "promptfoo" / "dist" / "src" / "python" / "wrapper.py"
    script = project_root() / "assertions" / "tool_sequence.py"
    args_file, out_file = root / "args.json", root / "out.json"
    context = {"config": {"expected": []}, "providerResponse": {"metadata": {}}}
    args_file.write_text(json.dumps(["", context]))
    times = []
    for _ in range(10):
        started = time.perf_counter()
        subprocess.run([sys.executable, str(wrapper), str(script), "get_assert", str(args_file), str(out_file)],
                       check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        command = [sys.executable, "-m", "agent_evals.cli", "run", "all", "--replay", "-j", str(args.jobs),
                   "-o", str(root / "{suite}.json")]
        started = time.perf_counter()
        done = subprocess.run(command, env=_env(root), cwd=project_root(), capture_output=True, text=True)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            print(done.stdout[-3000:], file=sys.stderr)

        rows, python_asserts, latency_ms = 0, 0, []
        for suite in SUITES:
            data = json.loads((root / f"{suite}.json").read_text())["results"]
            for row in data["results"]:
                rows += 1
                latency_ms.append(row.get("latencyMs") or 0)
                python_asserts += sum(
                    1 for c in (row.get("gradingResult") or {}).get("componentResults", [])
                    if (c.get("assertion") or {}).get("type") == "python"
                )
        start_pf = promptfoo_start(root)
        per_process = python_process(root)
        with PortalProcess(data_dir=root / "portal-probe") as portal:
            portal_start = portal.startup_seconds or 0.0

    hooks = rows * 2 + len(SUITES) * 2  # beforeEach + afterEach per row, beforeAll + afterAll per suite
    print(f"all suites, --replay, -j {args.jobs}: {wall:.1f} s wall, exit {done.returncode}, {rows} rows\n")
    print("where the time goes (estimates; several run in parallel):")
    print(f"  Promptfoo start and finish, per suite      {start_pf:6.2f} s  x {len(SUITES)} = {start_pf * len(SUITES):6.1f} s")
    print(f"  portal start (to healthy), per suite        {portal_start:6.2f} s  x {len(SUITES)} = {portal_start * len(SUITES):6.1f} s")
    print(f"  conversations (provider: loop, MCP, git)    median {statistics.median(latency_ms) / 1000:5.2f} s, "
          f"sum {sum(latency_ms) / 1000:6.1f} s")
    print(f"  Python processes: {python_asserts} assertions + {hooks} hook calls, "
          f"{per_process * 1000:.0f} ms each = {(python_asserts + hooks) * per_process:6.1f} s of process time")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
