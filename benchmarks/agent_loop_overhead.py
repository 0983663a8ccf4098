"""Agent loop overhead per model round: everything but the model's latency and the tool's own time.

Starts a portal (``PortalProcess``, loopback, token, fresh temporary data dir) and the
scripted OpenAI-compatible server answering at once, opens the spoke agent (one MCP
session) and runs ``--turns`` turns of (``get_spoke`` tool call → text reply), each
from a fresh one-message history. For every model round it measures:

* the round's wall time, from the loop's model call to the next model call (or the
  end of the turn) — the chat model is wrapped to timestamp its calls;
* the scripted server's own handling time for that request (recorded server-side
  around its request handler, from the parsed request line to the flushed reply);
* the tool's own time, ``ToolCall.duration_ms`` (MCP round trip and portal work).

overhead = round − server handling − tool time: the openai client, the HTTP hop to
the model, message building and the loop itself. Target: median below 10 ms.

For context it also reports a bare model round (``model.complete`` of the same request,
outside the loop), the tool's own time, the MCP session open time (paid once per
conversation; once per message by the portal's chat endpoint) and, with ``--chat``,
``POST /api/agents/spoke/chat`` per message minus the server handling time.

    .venv/bin/python benchmarks/agent_loop_overhead.py [--turns 200] [--chat 50] [--target-ms 10]

Exit status 1 when the median overhead misses the target.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from agent_evals.agent.factory import create_agent
from agent_evals.llm.types import ChatModel, ChatResponse, Message, ToolSpec
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.testing import scripted_openai
from agent_evals.testing.scripted_openai import ChatRequest, Reply, ScriptedOpenAIServer

Row = tuple[str, list[float], str]


class ServerClock:
    """Records the scripted server's handling time per request, in order (requests here are sequential).

    A time is recorded after the reply was flushed, so it may land just after the client
    moved on; :meth:`wait_for` waits until every request so far has been recorded.
    """

    def __init__(self) -> None:
        self.ms: list[float] = []
        self._lock = threading.Lock()

    def install(self) -> None:
        original = scripted_openai._Handler.do_POST

        def timed(handler: Any) -> None:
            started = time.perf_counter()
            original(handler)
            with self._lock:
                self.ms.append((time.perf_counter() - started) * 1000)

        scripted_openai._Handler.do_POST = timed  # type: ignore[method-assign,assignment]

    def count(self) -> int:
        with self._lock:
            return len(self.ms)

    def wait_for(self, count: int, timeout: float = 2.0) -> list[float]:
        deadline = time.monotonic() + timeout
        while self.count() < count and time.monotonic() < deadline:
            time.sleep(0.001)
        with self._lock:
            return list(self.ms)


class TimedModel:
    """Wraps the agent's chat model to timestamp the start of each model call."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.starts: list[float] = []

    @property
    def model(self) -> str:
        return self.inner.model

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
    ) -> ChatResponse:
        self.starts.append(time.perf_counter())
        return await self.inner.complete(messages, tools=tools, temperature=temperature)

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()


def tool_then_text(request: ChatRequest) -> Reply:
    """A tool call for a fresh user message, a text reply once the tool answered."""
    if request.messages[-1].get("role") == "tool":
        return Reply.text("crm-dev-neu is a dev spoke in northeurope.", usage=(900, 12))
    return Reply.tool_calls([("get_spoke", {"name": "crm-dev-neu"})], usage=(800, 20))


async def loop_rounds(
    portal: PortalProcess, clock: ServerClock, turns: int, warmup: int
) -> dict[str, list[float]]:
    from agent_evals.llm.settings import chat_model

    model = TimedModel(chat_model("agent"))
    portal_variables = {"PORTAL_URL": portal.url, "PORTAL_TOKEN": portal.token or ""}
    out: dict[str, list[float]] = {
        "overhead": [],
        "round": [],
        "server": [],
        "tool": [],
        "open": [],
        "cold": [],
    }
    rounds: list[tuple[float, float]] = []  # (round wall ms, tool ms), in request order
    first_request = clock.count()
    started = time.perf_counter()
    async with create_agent("spoke", chat_model=model, variables=portal_variables) as agent:
        out["cold"].append((time.perf_counter() - started) * 1000)  # imports the MCP client on the way
        for number in range(warmup + turns):
            model.starts.clear()
            reply = await agent.respond([{"role": "user", "content": f"Show me crm-dev-neu ({number})"}])
            bounds = [*model.starts, time.perf_counter()]
            tools = [sum(c.duration_ms for c in reply.tool_calls), 0.0]  # round 1 runs the tool, round 2 none
            rounds += [((bounds[i + 1] - bounds[i]) * 1000, tools[i]) for i in range(len(model.starts))]
        server = clock.wait_for(first_request + len(rounds))[first_request:]
        for index, ((round_ms, tool_ms), server_ms) in enumerate(zip(rounds, server, strict=True)):
            if index < 2 * warmup:
                continue
            out["round"].append(round_ms)
            out["server"].append(server_ms)
            out["overhead"].append(round_ms - server_ms - tool_ms)
            if index % 2 == 0:
                out["tool"].append(tool_ms)
        out["bare"] = await bare_rounds(model.inner, agent.tool_specs, clock, turns)
    for _ in range(20):  # MCP session open time, once per conversation (per message on the chat endpoint)
        started = time.perf_counter()
        async with create_agent("spoke", chat_model=model, variables=portal_variables):
            out["open"].append((time.perf_counter() - started) * 1000)
    await model.aclose()
    return out


async def bare_rounds(model: ChatModel, specs: list[ToolSpec], clock: ServerClock, count: int) -> list[float]:
    """``model.complete`` alone, same request shape, minus the server's handling: the client's part of a round."""
    messages = [{"role": "system", "content": "x" * 4000}, {"role": "user", "content": "Show me crm-dev-neu"}]
    first_request = clock.count()
    elapsed = []
    for _ in range(count):
        started = time.perf_counter()
        await model.complete(messages, tools=specs, temperature=0.2)
        elapsed.append((time.perf_counter() - started) * 1000)
    server = clock.wait_for(first_request + count)[first_request:]
    return [total - handled for total, handled in zip(elapsed, server, strict=True)]


def chat_messages(portal: PortalProcess, clock: ServerClock, count: int) -> list[float]:
    """``POST /api/agents/spoke/chat`` per message (tool call → text) minus the server's handling."""
    headers = {"Authorization": f"Bearer {portal.token}"}
    warmup = 3  # the portal makes its model client and MCP session on its first message
    elapsed = []
    with httpx.Client(base_url=portal.url, headers=headers, timeout=60) as client:
        for number in range(warmup + count):
            first_request = clock.count()
            started = time.perf_counter()
            answer = client.post(
                "/api/agents/spoke/chat", json={"message": f"Show me crm-dev-neu ({number})"}
            )
            total = (time.perf_counter() - started) * 1000
            answer.raise_for_status()
            handled = clock.wait_for(first_request + 2)[first_request:]  # two model rounds per message
            if number >= warmup:
                elapsed.append(total - sum(handled))
    return elapsed


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def print_table(rows: list[Row]) -> None:
    print(f"{'measure':<44} {'n':>5} {'median':>9} {'p95':>9}  note")
    for name, values, note in rows:
        median, p95 = statistics.median(values), percentile(values, 0.95)
        print(f"{name:<44} {len(values):>5} {median:>6.2f} ms {p95:>6.2f} ms  {note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="measured turns of (tool call → text)")
    parser.add_argument("--warmup", type=int, default=5, help="turns run first and not measured")
    parser.add_argument("--chat", type=int, default=50, help="chat endpoint messages to measure (0 = skip)")
    parser.add_argument(
        "--target-ms", type=float, default=10.0, help="median overhead target per model round"
    )
    args = parser.parse_args(argv)

    clock = ServerClock()
    clock.install()
    with (
        tempfile.TemporaryDirectory(prefix="agent-loop-bench-") as tmp,
        ScriptedOpenAIServer(tool_then_text) as llm,
    ):
        env = {"OPENAI_BASE_URL": llm.base_url, "AGENT_MODEL": "agent-model", "LLM_MAX_RETRIES": "0"}
        env.update({name: "" for name in ("AZURE_OPENAI_ENDPOINT", "OPENAI_API_KEY", "AZURE_OPENAI_API_KEY")})
        os.environ.update(env)  # this process's agent uses the scripted server too
        with PortalProcess(
            data_dir=Path(tmp) / "data",
            token=PortalProcess.new_token(),
            log_file=Path(tmp) / "portal.log",
            extra_env=env,
        ) as portal:
            measured = asyncio.run(loop_rounds(portal, clock, args.turns, args.warmup))
            chat = chat_messages(portal, clock, args.chat) if args.chat else []

    overhead = measured["overhead"]
    rows: list[Row] = [
        (
            "loop overhead per model round",
            overhead,
            f"round − server − tool; target median < {args.target_ms:g} ms",
        ),
        ("  model round, wall time", measured["round"], "as the loop sees it"),
        ("  scripted server handling", measured["server"], "server-side, per request"),
        ("  tool's own time (get_spoke)", measured["tool"], "ToolCall.duration_ms: MCP + portal"),
        ("bare model round minus server", measured["bare"], "openai client + HTTP hop, outside the loop"),
        (
            "MCP session open",
            measured["open"],
            f"per conversation (chat: per message); first {measured['cold'][0]:.0f} ms",
        ),
    ]
    if chat:
        rows.append(
            ("chat endpoint per message minus server", chat, "2 model rounds + tool + session open + HTTP")
        )
    print_table(rows)
    median = statistics.median(overhead)
    verdict = "meets" if median < args.target_ms else "MISSES"
    print(
        f"\nmedian loop overhead {median:.2f} ms per model round {verdict} the {args.target_ms:g} ms target"
    )
    return 0 if median < args.target_ms else 1


if __name__ == "__main__":
    sys.exit(main())
