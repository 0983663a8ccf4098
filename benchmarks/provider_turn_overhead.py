"""Harness overhead per conversation turn, in replay mode (everything but model latency).

Records one three-turn simulated-user conversation (see ``provider_support``) against a
real portal with the scripted models, then replays it ``--runs`` times in-process through
``call_api`` (the models are switched off: every model request would fail). Per run:

    overhead per turn = (wall time of call_api − time inside the MCP tool calls
                         − time inside the portal's REST API) / turns

which counts config parsing, the agent factory, opening the MCP session, the replay
checks (fingerprints included), the driver, the report and the redaction; the REST time
(the end-state snapshot: the portal reading PRs, diffs and sources) is the portal's own
work and is shown apart. Target: median below 30 ms.

    .venv/bin/python benchmarks/provider_turn_overhead.py [--runs 50]

Exit status 1 when the median misses the target.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from provider_support import CASE, ToolClock, bench_environment, context

from agent_evals.provider.run import call_api
from agent_evals.testing.scripted_openai import Reply

TARGET_MS = 30.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    clock = ToolClock()
    with bench_environment() as bench:
        recorded = call_api("", {"config": {"record": str(bench.folder)}}, context("bench-record"))
        if recorded.get("error"):
            print(f"recording failed: {recorded['error']}")
            return 1
        turns = recorded["metadata"]["turns"]
        bench.server.responder = lambda request: Reply.error(500, "models are off", headers={"x-should-retry": "false"})
        options = {"config": {"replay": str(bench.folder)}}
        per_turn, walls, tools, rest = [], [], [], []
        for run in range(args.runs + 1):
            clock.reset()
            started = time.perf_counter()
            result = call_api("", options, context(f"bench-{run}"))
            wall = time.perf_counter() - started
            if result.get("error"):
                print(f"replay {run} failed: {result['error']}")
                return 1
            if run == 0:
                continue  # the first replay imports and warms up
            walls.append(wall * 1000)
            tools.append(clock.seconds * 1000)
            rest.append(clock.rest_seconds * 1000)
            per_turn.append((wall - clock.seconds - clock.rest_seconds) * 1000 / turns)
    median = statistics.median(per_turn)
    p90 = statistics.quantiles(per_turn, n=10)[-1]
    print(f"case {CASE}: {turns} turns, {clock.calls} tool calls per conversation, {args.runs} replays")
    print(f"conversation wall time: median {statistics.median(walls):.1f} ms; "
          f"inside tool calls: median {statistics.median(tools):.1f} ms; "
          f"portal REST (end-state snapshot): median {statistics.median(rest):.1f} ms")
    print(f"harness overhead per turn: median {median:.1f} ms, p90 {p90:.1f} ms, "
          f"min {min(per_turn):.1f} ms, max {max(per_turn):.1f} ms (target: median < {TARGET_MS:.0f} ms)")
    return 0 if median < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
