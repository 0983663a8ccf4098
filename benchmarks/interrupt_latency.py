"""Time from Ctrl-C to the runner's exit, cleanup done, with 8 conversations in flight.

Runs ``agent-evals run spoke-create -j 8`` (the 8 copy cases, live, against the scripted model
with 0.4 s per call) in a pseudo-terminal, waits until pull requests exist, types Ctrl-C as a
terminal does (SIGINT to the whole foreground group) and measures until the runner has exited
with every PR of the run abandoned and its portal stopped. Target: under 5 s.

    .venv/bin/python benchmarks/interrupt_latency.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_evals.golden.record import build_scripts  # noqa: E402
from agent_evals.suites.discovery import select  # noqa: E402
from agent_evals.testing.conversations import ScriptedConversations  # noqa: E402
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer, fixed_latency  # noqa: E402
from tests.runner.terminal import Terminal, pull_requests  # noqa: E402

TARGET_S = 5.0


def one_run(server: ScriptedOpenAIServer) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data" / "portal"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PORTAL_", "AGENT_EVALS_", "OPENAI_"))}
        env.update(AGENT_EVALS_DATA_DIR=str(data), PROMPTFOO_CONFIG_DIR=str(Path(tmp) / "pf"),
                   OPENAI_BASE_URL=server.base_url, AGENT_MODEL="agent-model", USER_MODEL="user-model", JUDGE_MODEL="none",
                   LLM_MAX_RETRIES="0", PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1")
        terminal = Terminal([sys.executable, "-m", "agent_evals.cli", "run", "spoke-create", "--filter-pattern",
                             "C0[1-8]", "-j", "8", "--no-cache"], env=env, cwd=ROOT)
        terminal.wait_for(lambda: len(pull_requests(data)) >= 1, 180, "pull requests")
        in_flight = 8 - len(pull_requests(data, "abandoned"))
        started = time.monotonic()
        terminal.ctrl_c()
        code = terminal.wait(timeout=60)
        elapsed = time.monotonic() - started
        active = len(pull_requests(data))
        if code != 130 or active:
            print(terminal.output[-3000:])
        return elapsed, active, in_flight


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    scripts = ScriptedConversations(build_scripts(select("spoke-create")[0]))
    times = []
    with ScriptedOpenAIServer(fixed_latency(scripts, 0.4)) as server:
        for _ in range(args.runs):
            elapsed, active, in_flight = one_run(server)
            print(f"Ctrl-C → exit: {elapsed:.2f} s; conversations in flight: {in_flight}; PRs left active: {active}")
            if active:
                return 1
            times.append(elapsed)
    median = statistics.median(times)
    print(f"median {median:.2f} s over {args.runs} runs (target < {TARGET_S:.0f} s)")
    return 0 if median < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
