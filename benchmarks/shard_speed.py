"""Four shards at once on one machine against one unsharded run with the same total concurrency:
the 22-case spoke-create suite live, every model call answered by the scripted server after
``--latency`` seconds (default 1 s), then the four shards merged.

- unsharded: ``agent-evals run spoke-create -j 8``;
- sharded: ``agent-evals run spoke-create --shard I/4 -j 2`` for I = 1…4, started together (four
  portals, four Promptfoo processes, 2 × 4 workers), then ``agent-evals merge`` of their files.

The model's latency dominates both; what sharding costs on one machine is the extra start-up
(portals, Promptfoo, workers) on shared cores, and what it buys across machines is that each one
needs only a quarter of the time at a quarter of the concurrency. Printed: wall times, the
merge's time, and whether the merged eval has the unsharded run's counts.

    .venv/bin/python benchmarks/shard_speed.py [--latency 1.0] [--shards 4] [--jobs 8]
"""

from __future__ import annotations

import argparse
import json
import os
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


def _env(server: ScriptedOpenAIServer, root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in KEEP}
    env.update(OPENAI_BASE_URL=server.base_url, AGENT_MODEL="agent-model", USER_MODEL="user-model",
               JUDGE_MODEL="none", LLM_MAX_RETRIES="0", AGENT_EVALS_DATA_DIR=str(root / "data" / "portal"),
               PROMPTFOO_CONFIG_DIR=str(root / "promptfoo"))
    return env


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "agent_evals.cli", *args]


def _stats(path: Path) -> dict[str, int]:
    stats = json.loads(path.read_text())["results"]["stats"]
    return {k: stats[k] for k in ("successes", "failures", "errors")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per model reply")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=8, help="the total concurrency (split over the shards)")
    args = parser.parse_args()
    per_shard = max(1, args.jobs // args.shards)
    scripts = ScriptedConversations(build_scripts(select("spoke-create")[0]))
    with ScriptedOpenAIServer(fixed_latency(scripts, args.latency)) as server, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        whole = root / "whole.json"
        started = time.perf_counter()
        subprocess.run(_command("run", "spoke-create", "-j", str(args.jobs), "--no-cache", "-o", str(whole)),
                       env=_env(server, root / "whole"), cwd=project_root(), capture_output=True, check=False)
        unsharded = time.perf_counter() - started
        calls = server.request_count

        env = _env(server, root / "sharded")
        started = time.perf_counter()
        runs = [
            subprocess.Popen(_command("run", "spoke-create", "--shard", f"{i}/{args.shards}", "-j", str(per_shard),
                                      "--no-cache", "-o", str(root / "results" / "{suite}.json")),
                             env=env, cwd=project_root(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for i in range(1, args.shards + 1)
        ]
        codes = [run.wait() for run in runs]
        sharded = time.perf_counter() - started
        files = sorted((root / "results").glob("spoke-create.shard-*.json"))
        started = time.perf_counter()
        merged = subprocess.run(_command("merge", *map(str, files)), env=env, cwd=project_root(),
                                capture_output=True, text=True)
        merge_s = time.perf_counter() - started
        same = _stats(root / "results" / "spoke-create.json") == _stats(whole)

    print(f"spoke-create, 22 cases, {calls} model calls at {args.latency:g} s each; {os.cpu_count()} cores")
    print(f"unsharded, -j {args.jobs}:                    {unsharded:6.1f} s")
    print(f"{args.shards} shards at once, -j {per_shard} each:        {sharded:6.1f} s   (exit codes {codes})")
    print(f"merge of the {len(files)} shards (with import):  {merge_s:6.1f} s   (exit {merged.returncode})")
    print(f"merged eval has the unsharded counts: {same}")
    return 0 if same and merged.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
