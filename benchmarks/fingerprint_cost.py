"""What fingerprinting costs per conversation, and what the preflight check costs per run.

Fingerprints (``agent_evals.conversation.fingerprints``) are taken once per conversation on
recording and compared once per conversation on replay: the agent's instructions and
tools (the spoke agent: 9 tools), the user's definition and the case. Also times
``agent-evals check all --offline`` (target: under 3 s on 2 cores).

    .venv/bin/python benchmarks/fingerprint_cost.py [--runs 2000]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from agent_evals.agent.config import load_agent_config
from agent_evals.conversation.fingerprints import agent_fingerprint, case_fingerprint, user_fingerprint
from agent_evals.preflight.offline_tools import portal_tool_specs

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    agent = load_agent_config("spoke")
    specs = portal_tool_specs()
    tools = [specs[name] for name in agent.tools]
    system = [{"role": "system", "content": agent.instructions}]
    user = {"goal": "Get a copy of crm-dev-neu in West Europe", "persona": "terse", "facts": {"name": "crm-dev-weu"}}
    times = []
    for _ in range(args.runs):
        started = time.perf_counter()
        agent_fingerprint(system, tools, agent.temperature)
        user_fingerprint("simulated_user", user)
        case_fingerprint("C01", None)
        times.append((time.perf_counter() - started) * 1e6)
    print(f"fingerprints per conversation: median {statistics.median(times):.0f} µs "
          f"(p90 {statistics.quantiles(times, n=10)[-1]:.0f} µs) over {args.runs} runs "
          f"({len(agent.instructions)} characters of instructions, {len(tools)} tools)")
    walls = []
    for _ in range(3):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "agent_evals.cli", "check", "all", "--offline", "--replay"],
                              cwd=ROOT, capture_output=True, text=True)
        walls.append(time.perf_counter() - started)
        if done.returncode != 0:
            print(done.stdout + done.stderr)
            return 1
    print(f"agent-evals check all --offline --replay: median {statistics.median(walls):.2f} s (target < 3 s): "
          f"{done.stdout.strip()}")
    return 0 if statistics.median(walls) < 3 else 1


if __name__ == "__main__":
    sys.exit(main())
