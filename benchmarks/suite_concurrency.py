"""Wall time of the 22-case spoke-create suite at -j 1, 4 and 8, with every model call
answered by the scripted server after a fixed delay (300 ms by default).

The scripted server plays the suite's golden plans (agent and simulated user), so each
case is a full live conversation through `agent-evals run`, Promptfoo, the provider, the
agent loop, the portal, real PRs, the assertions and the cleanup hook. The harness must
not be the bottleneck: the speed-up should be close to the concurrency.

    .venv/bin/python benchmarks/suite_concurrency.py [--latency 0.3] [--jobs 1 4 8]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent_evals.golden.record import build_scripts
from agent_evals.paths import project_root
from agent_evals.suites.discovery import select
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer, fixed_latency

KEEP = ("PATH", "HOME", "LANG", "TMPDIR")


def run_once(jobs: int, server: ScriptedOpenAIServer, root: Path) -> tuple[float, dict[str, int], int]:
    env = {k: v for k, v in os.environ.items() if k in KEEP}
    env.update(
        OPENAI_BASE_URL=server.base_url, AGENT_MODEL="agent-model", USER_MODEL="user-model", JUDGE_MODEL="none", LLM_MAX_RETRIES="0",
        AGENT_EVALS_DATA_DIR=str(root / "data"), PROMPTFOO_CONFIG_DIR=str(root / "promptfoo"),
    )
    out = root / f"results-j{jobs}.json"
    command = [sys.executable, "-m", "agent_evals.cli", "run", "spoke-create", "-j", str(jobs), "-o", str(out), "--no-cache"]
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=project_root(), capture_output=True, text=True)
    wall = time.perf_counter() - started
    cpu = _children_cpu() - cpu_before
    stats = json.loads(out.read_text())["results"]["stats"] if out.exists() else {}
    if done.returncode != 0:
        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
    counts = {k: stats.get(k, 0) for k in ("successes", "failures", "errors")}
    counts["cpu_s"] = round(cpu, 1)
    return wall, counts, server.request_count


def _children_cpu() -> float:
    """CPU seconds used by finished child processes (the run and everything it started)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per model reply")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 4, 8])
    args = parser.parse_args()

    scripts = ScriptedConversations(build_scripts(select("spoke-create")[0]))
    rows = []
    with ScriptedOpenAIServer(fixed_latency(scripts, args.latency)) as server, tempfile.TemporaryDirectory() as tmp:
        for jobs in args.jobs:
            before = server.request_count
            wall, counts, after = run_once(jobs, server, Path(tmp))
            rows.append((jobs, wall, counts, after - before))
            print(f"-j {jobs}: {wall:.1f} s  {counts}", flush=True)

    base = rows[0][1]
    model_time = rows[0][3] * args.latency
    print(f"\n22 cases, {rows[0][3]} model calls at {args.latency * 1000:.0f} ms each "
          f"({model_time:.0f} s of model latency if run one at a time)")
    cores = os.cpu_count() or 1
    print(f"{'-j':>4} {'wall s':>8} {'speed-up':>9} {'ideal':>6} {'cpu s':>7} {'cores busy':>11}  result")
    for jobs, wall, counts, _ in rows:
        busy = counts["cpu_s"] / wall
        print(f"{jobs:>4} {wall:>8.1f} {base / wall:>9.2f} {jobs / rows[0][0]:>6.1f} {counts['cpu_s']:>7.1f} "
              f"{busy:>6.2f} of {cores}  {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
