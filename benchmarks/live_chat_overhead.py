"""What storing a conversation and tracing it add to one chat turn, on SQLite and on a real PostgreSQL.

The chat endpoint's own work around the agent, as ``ChatService.chat`` does it, for a turn of
spoke-create's C01 golden conversation (3 model calls, 2 tool calls, the real tool results) in a
conversation that already has 2 turns:

- **storing**: ``begin_turn`` + marking the conversation answering (before the agent runs: one small
  conditional update, the conversation being the one this process answered last, kept in memory),
  ``finish_turn`` + saving it (after: the record and the history), each store call off the event loop
  (``asyncio.to_thread``), secrets scrubbed, as the chat does; also shown: the same when the
  conversation is read from the store first (after a restart, or when another replica answered it);
- **spans**: the turn's ``invoke_agent`` span, a ``chat`` span around each of the 3 model calls and an
  ``execute_tool`` span around each of the 2 tool calls (OpenTelemetry SDK, batch processor, OTLP/HTTP
  exporter to a local receiver), minus the same calls unwrapped (the model and the tools answer at once,
  so only the wrapping is measured).

``--turns`` turns each (default 300; median and 95th percentile). Target: storing + spans under 5 ms
a turn. Exit status 1 when missed.

    .venv/bin/python benchmarks/live_chat_overhead.py [--turns 300] [--backend sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 5.0


class _Model:
    model = "bench-model"

    def __init__(self, responses: list[Any]) -> None:
        self.responses, self.index = responses, 0

    async def complete(self, messages: Any, **options: Any) -> Any:
        response = self.responses[self.index % len(self.responses)]
        self.index += 1
        return response


class _Tools:
    specs: list[dict[str, Any]] = []

    def __init__(self, results: list[Any]) -> None:
        self.results, self.index = results, 0

    async def call(self, name: str, arguments: Any) -> Any:
        result = self.results[self.index % len(self.results)]
        self.index += 1
        return result


def golden_turn() -> tuple[list[Any], list[Any], Any]:
    """C01's model responses and tool results, and its record."""
    from agent_evals.agent.types import ToolResult
    from agent_evals.conversation.cassette import load_cassette

    cassette = load_cassette(ROOT / "evals" / "spoke-create" / "golden" / "C01.json")
    responses = [c.response for c in cassette.model_calls if c.role == "agent"][:3]
    results = [ToolResult(c.result, json.dumps(c.result), False) for c in cassette.record.tool_calls[:2]]
    return responses, results, cassette.record


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def storing(store: Any, turns: int, record: Any, *, kept: bool) -> list[float]:
    from agent_evals.live.stored import StoredConversation
    from agent_evals.live.turns import begin_turn, finish_turn
    from agent_evals.packs import load_pack
    from agent_evals.record import Usage

    pack = load_pack("spoke")
    conversation = StoredConversation.new("bench", "alice", record.agent)
    for turn in record.turns:  # 2 turns already
        begin_turn(conversation, turn.user, record.agent, "bench")
        finish_turn(conversation, text=turn.assistant or "", calls=turn.tool_calls, usage=Usage(10, 1, 11, 1),
                    stop_reason="reply", messages=({"role": "assistant", "content": turn.assistant},), pack=pack)
    store.save(conversation)
    calls, message = record.turns[0].tool_calls, record.turns[0].user
    messages = tuple({"role": "assistant", "content": "x" * 400} for _ in range(5))
    times = []
    found = conversation
    for _ in range(turns):
        started = time.perf_counter()
        if kept:  # answered last by this process: one conditional update, no read
            before = found.updated_at
            begin_turn(found, message, record.agent, "bench")
            assert await asyncio.to_thread(store.mark_answering, found, True, before)
        else:
            found = await asyncio.to_thread(store.get, "bench")
            begin_turn(found, message, record.agent, "bench")
            await asyncio.to_thread(store.mark_answering, found, True)
        finish_turn(found, text="Done.", calls=calls, usage=Usage(100, 10, 110, 3), stop_reason="reply",
                    messages=messages, pack=pack)
        await asyncio.to_thread(store.save, found)
        times.append((time.perf_counter() - started) * 1000)
        found.record.turns.pop()  # keep the conversation the same size from turn to turn
        found.history = found.history[:-6]
        found.turn_log.pop()
        store.save(found)
    return times


async def spans(turns: int, traced: bool, responses: list[Any], results: list[Any], agent: Any) -> list[float]:
    from agent_evals.live.telemetry import Telemetry

    telemetry = Telemetry.from_env() if traced else Telemetry.disabled()
    model, tools = telemetry.wrap_model(_Model(responses), "bench"), telemetry.wrap_tools(_Tools(results))
    times = []
    for _ in range(turns):
        started = time.perf_counter()
        with telemetry.invoke_agent(agent, "bench") as span:
            for _ in range(3):
                await model.complete([{"role": "user", "content": "hi"}], temperature=0.2)
            for _ in range(2):
                await tools.call("get_spoke", {"name": "crm-dev-neu"})
            span.answered(responses[0].usage, "reply")
        times.append((time.perf_counter() - started) * 1000)
    telemetry.shutdown()
    return times


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], action="append")
    args = parser.parse_args()
    import os

    from agent_evals.live.store import StoreSettings

    from agent_evals.live.store_holder import open_store

    receiver = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{receiver.server_address[1]}"
    responses, results, record = golden_turn()
    plain = asyncio.run(spans(args.turns, False, responses, results, record.agent))
    traced = asyncio.run(spans(args.turns, True, responses, results, record.agent))
    span_ms = max(statistics.median(traced) - statistics.median(plain), 0.0)
    print(f"spans (invoke_agent + 3 chat + 2 execute_tool, OTLP batch export): median {span_ms:.2f} ms a turn "
          f"(traced {statistics.median(traced):.3f} ms, p95 {percentile(traced, 0.95):.3f}; unwrapped "
          f"{statistics.median(plain):.3f} ms)")
    ok = True
    with tempfile.TemporaryDirectory(prefix="live-chat-") as tmp:
        for backend in args.backend or ["sqlite", "postgresql"]:
            server = None
            if backend == "sqlite":
                store = open_store(StoreSettings(f"sqlite:///{Path(tmp) / 'c.sqlite3'}", retention_days=0))
            else:
                from agent_evals.testing.postgres import PostgresServer

                server = PostgresServer(Path(tmp) / "pg").start()
                store = open_store(StoreSettings(server.create_database("chat"), retention_days=0))
            try:
                read = asyncio.run(storing(store, args.turns, record, kept=False))
                times = asyncio.run(storing(store, args.turns, record, kept=True))
            finally:
                store.close()
                if server is not None:
                    server.close()
            total = statistics.median(times) + span_ms
            ok = ok and total < TARGET_MS
            print(f"{backend}: storing median {statistics.median(times):.2f} ms a turn (p95 {percentile(times, 0.95):.2f}); "
                  f"storing + spans {total:.2f} ms (target < {TARGET_MS:.0f} ms); a conversation read from the store "
                  f"first (after a restart, or answered elsewhere): {statistics.median(read):.2f} ms")
    receiver.shutdown()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
