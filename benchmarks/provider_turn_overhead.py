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

    .venv/bin/python benchmarks/provider_turn_overhead.py [--runs 50] [--tracing]

With ``--tracing`` it runs twice, without and with a ``traceparent`` (the provider then records
and posts OpenTelemetry spans to a local OTLP sink), and prints what the spans add per turn
(target: under 5 ms).

Exit status 1 when the median misses the target.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from provider_support import CASE, ToolClock, bench_environment, context

from agent_evals.provider.run import call_api
from agent_evals.testing.scripted_openai import Reply

TARGET_MS = 30.0


class _Sink(BaseHTTPRequestHandler):
    posts = 0

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        _Sink.posts += 1
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--tracing", action="store_true")
    args = parser.parse_args()
    if not args.tracing:
        return measure(args.runs, traced=False)[1]
    sink = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    plain, code = measure(args.runs, traced=False)
    traced, code2 = measure(args.runs, traced=True, endpoint=f"http://127.0.0.1:{sink.server_address[1]}/v1/traces")
    sink.shutdown()
    added = traced - plain
    print(f"spans add {added:.2f} ms per turn (median {plain:.2f} → {traced:.2f} ms; {_Sink.posts} posts received; "
          f"target < 5 ms)")
    return max(code, code2, 0 if added < 5 else 1)


def measure(runs: int, *, traced: bool, endpoint: str | None = None) -> tuple[float, int]:
    clock = ToolClock()
    with bench_environment() as bench:
        recorded = call_api("", {"config": {"record": str(bench.folder)}}, context("bench-record"))
        if recorded.get("error"):
            print(f"recording failed: {recorded['error']}")
            return 1
        turns = recorded["metadata"]["turns"]
        bench.server.responder = lambda request: Reply.error(500, "models are off", headers={"x-should-retry": "false"})
        options = {"config": {"replay": str(bench.folder), **({"otlp_endpoint": endpoint} if endpoint else {})}}
        per_turn, walls, tools, rest = [], [], [], []
        for run in range(runs + 1):
            clock.reset()
            started = time.perf_counter()
            ctx = context(f"bench-{run}")
            if traced:
                ctx["traceparent"] = f"00-{run:032x}-{run + 1:016x}-01"
            result = call_api("", options, ctx)
            wall = time.perf_counter() - started
            if result.get("error"):
                print(f"replay {run} failed: {result['error']}")
                return 0.0, 1
            if run == 0:
                continue  # the first replay imports and warms up
            walls.append(wall * 1000)
            tools.append(clock.seconds * 1000)
            rest.append(clock.rest_seconds * 1000)
            per_turn.append((wall - clock.seconds - clock.rest_seconds) * 1000 / turns)
    median = statistics.median(per_turn)
    p90 = statistics.quantiles(per_turn, n=10)[-1]
    print(f"case {CASE}{' (traced)' if traced else ''}: {turns} turns, {clock.calls} tool calls per conversation, "
          f"{runs} replays")
    print(f"conversation wall time: median {statistics.median(walls):.1f} ms; "
          f"inside tool calls: median {statistics.median(tools):.1f} ms; "
          f"portal REST (end-state snapshot): median {statistics.median(rest):.1f} ms")
    print(f"harness overhead per turn: median {median:.1f} ms, p90 {p90:.1f} ms, "
          f"min {min(per_turn):.1f} ms, max {max(per_turn):.1f} ms (target: median < {TARGET_MS:.0f} ms)")
    return median, 0 if median < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
