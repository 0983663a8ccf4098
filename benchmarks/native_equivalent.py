"""Promptfoo's own machinery doing work comparable to the kit's spoke-create suite (issue 16).

The ``native`` form of ``harness_cost.py``: the same 22 cases, each a multi-turn conversation,
played by Promptfoo's built-in pieces only, with no kit code in the measured processes:

* target: ``openai:chat:agent-model`` (Promptfoo's OpenAI provider) with ``apiBaseUrl`` set to a
  :class:`ScriptedOpenAIServer` whose responder answers every request after ``latency`` seconds
  with a short text naming the case ("Here is the plan for [C07], step 3: ...");
* user: ``promptfoo:simulated-user`` (``defaultTest.provider``). Its remote task API (POST
  ``{task: "tau", instructions, history, email, version}``, answer ``{result, tokenUsage}``,
  ``history`` with roles flipped) is redirected by ``PROMPTFOO_REMOTE_GENERATION_URL`` to an
  in-process stdlib HTTP server that also waits ``latency`` per call, speaks the golden plan's
  user lines and ends the conversation with ``###STOP###`` after the planned number of turns;
* grading: 8 inline ``type: javascript`` assertions per test, comparable to the kit's 8 checks
  per row (case key, turn counts, length bounds, regexes, transcript shape).

Matched per case (from ``build_scripts(select("spoke-create")[0])``): the number of agent model
calls. Promptfoo's text-only target makes one model call per turn, so a case whose golden agent
makes A calls (tool calls included) gets A turns, i.e. A agent calls. What differs:

* user calls: the kit's golden user speaks U times (its last, "[DONE]", message ends the
  conversation); here each of the A turns needs a user message, plus one final call that
  answers ``###STOP###`` -- so A + 1 user calls instead of U (6 instead of 3 for C01; 120
  instead of 67 in all). The golden lines open the turns that follow the golden agent's text
  replies; the turns that stand in for its tool rounds get "Go on.";
* no tools, no portal, no tool results in the history, no cleanup and no kit checks: the target
  only ever answers text, and the assertions check that text, not the spoke or pull request;
* no Python process is started (``python_processes`` is 0): both fake servers are threads of
  this process, so, as in the kit's forms, their CPU is not in ``cpu`` (child processes only).

    .venv/bin/python benchmarks/native_equivalent.py [--jobs 4] [--latency 0.3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

from agent_evals.golden.record import build_scripts, suite_cases
from agent_evals.suites.discovery import select
from agent_evals.testing.scripted_openai import ChatRequest, Reply, ScriptedOpenAIServer, fixed_latency

ROOT = Path(__file__).resolve().parents[1]
STOP = "###STOP###"
CASE_KEY = re.compile(r"\[(C\d\d)\]")
KEEP = ("HOME", "LANG", "TMPDIR")
ASSERTS = [  # 8 per test, all over the simulated-user transcript "User: …\n---\nAssistant: …"
    "output.includes('[' + context.vars.key + ']')",
    "(output.match(/^Assistant: /gm) || []).length === Number(context.vars.agent_calls)",
    "(output.match(/^User: /gm) || []).length === Number(context.vars.agent_calls)",
    "output.length > 200 && output.length < 20000",
    r"/Here is the plan for \[C\d{2}\], step \d+:/.test(output)",
    f"!output.includes('{STOP}')",
    "output.split('\\n---\\n').every((turn) => /^(User|Assistant): \\S/.test(turn))",
    "output.includes('step ' + context.vars.agent_calls + ':')",
]


def golden_cases() -> list[dict]:
    """Per case: id, goal, the golden agent's model calls and the golden user's lines."""
    suite = select("spoke-create")[0]
    scripts = iter(build_scripts(suite))  # per case: the agent script, then (conversations) the user's
    cases = []
    for case in suite_cases(suite):
        agent = next(scripts)
        user = next(scripts) if case.first_message_key is None else None
        assert user is None or user.key == case.goal.strip(), case.id
        lines = [str(u).replace("[DONE]", "").strip() for u in user.user] if user else [agent.key]
        # Golden user line k follows the agent's k-th text reply; the turns in between stand in for
        # the golden agent's tool rounds and get a filler line. The last line comes with the stop marker.
        texts = [i for i, step in enumerate(agent.agent) if not _is_tool_round(step)]
        calls = len(agent.agent)
        said = {0: lines[0]} | {i + 1: line for i, line in zip(texts, lines[1:-1]) if i + 1 < calls}
        cases.append({"id": case.id, "goal": (case.goal or agent.key).strip(), "agent_calls": calls,
                      "user_says": said, "user_stops": f"{lines[-1]} {STOP}".strip()})
    return cases


def _is_tool_round(step: object) -> bool:
    return isinstance(step, Reply) and bool((step.message or {}).get("tool_calls"))


def agent_responder(request: ChatRequest) -> Reply:
    """The target's model: a short text naming the case key (from the system prompt) and the turn."""
    system = next((str(m.get("content")) for m in request.messages if m.get("role") == "system"), "")
    match = CASE_KEY.search(system)
    key = match.group(1) if match else "C??"
    turn = sum(1 for m in request.messages if m.get("role") == "user")
    return Reply.text(f"Here is the plan for [{key}], step {turn}: I checked the request and the next "
                      f"action is ready.", usage=(40 * turn, 20))


class FakeTaskAPI:
    """Promptfoo's remote task API for ``task: "tau"`` (the simulated user), played from the plan."""

    def __init__(self, cases: list[dict], latency: float) -> None:
        self.cases = {c["id"]: c for c in cases}
        self.latency = latency
        self.calls = 0
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/api/v1/task"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def answer(self, body: dict) -> dict:
        if body.get("task") != "tau" or not isinstance(body.get("history"), list):
            raise ValueError(f"unexpected task request: {sorted(body)} task={body.get('task')!r}")
        case = self.cases[CASE_KEY.search(body.get("instructions") or "").group(1)]
        turn = sum(1 for m in body["history"] if m.get("role") == "assistant")  # user turns so far (flipped)
        text = case["user_stops"] if turn >= case["agent_calls"] else case["user_says"].get(turn, "Go on.")
        with self.lock:
            self.calls += 1
        return {"result": text, "tokenUsage": {"prompt": 50, "completion": 10, "total": 60, "numRequests": 1}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                time.sleep(api.latency)
                try:
                    body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                    status, reply = 200, api.answer(body)
                except Exception as exc:  # an answer Promptfoo turns into an error row
                    status, reply = 400, {"error": f"{type(exc).__name__}: {exc}"}
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def write_config(cases: list[dict], base_url: str, path: Path) -> None:
    config = {
        "description": "spoke-create, Promptfoo-native equivalent (simulated-user + OpenAI + JavaScript)",
        "prompts": ["You are the platform team's network agent. Case [{{key}}]. The requester wants: "
                    "{{goal}}"],
        "providers": [{"id": "openai:chat:agent-model",
                       "config": {"apiBaseUrl": base_url, "apiKey": "native-bench", "temperature": 0}}],
        "defaultTest": {
            "provider": {"id": "promptfoo:simulated-user",
                         "config": {"maxTurns": max(c["agent_calls"] for c in cases) + 2}},
            "assert": [{"type": "javascript", "value": expr} for expr in ASSERTS],
        },
        "tests": [{"description": f"{c['id']} native", "metadata": {"id": c["id"]},
                   "vars": {"key": c["id"], "goal": c["goal"], "agent_calls": c["agent_calls"],
                            "instructions": f"You are the requester of case [{c['id']}]. Goal: {c['goal']}"}}
                  for c in cases],
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_native(jobs: int, latency: float, tmp: Path) -> dict:
    cases = golden_cases()
    tmp.mkdir(parents=True, exist_ok=True)
    config, out = tmp / "native-promptfooconfig.yaml", tmp / "native.json"
    user_api = FakeTaskAPI(cases, latency)
    try:
        with ScriptedOpenAIServer(fixed_latency(agent_responder, latency)) as server:
            write_config(cases, server.base_url, config)
            env = {k: v for k, v in os.environ.items() if k in KEEP}
            env.update(PATH=f"{ROOT / 'node_modules' / '.bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                       PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1",
                       PROMPTFOO_CONFIG_DIR=str(tmp / "pf"), PROMPTFOO_REMOTE_GENERATION_URL=user_api.url,
                       # the kit's cache of compiled modules (promptfoo_env's): npx under Node 22 would
                       # otherwise keep its own in the temporary directory, and only one form would have one
                       NODE_COMPILE_CACHE=str(ROOT / "node_modules" / ".cache" / "node-compile"))
            agent_before, user_before = server.request_count, user_api.calls
            cpu_before = children_cpu()
            started = time.perf_counter()
            command = ["npx", "promptfoo", "eval", "-c", str(config), "-j", str(jobs), "-o", str(out),
                       "--no-cache", "--no-table"]
            done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
            wall = time.perf_counter() - started
            cpu = children_cpu() - cpu_before
            agent_calls, user_calls = server.request_count - agent_before, user_api.calls - user_before
    finally:
        user_api.close()
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-2000:], file=sys.stderr)
    rows = json.loads(out.read_text())["results"]["results"] if out.exists() else []
    passed = sum(r["success"] for r in rows)
    return {"form": "native", "wall": wall, "cpu": cpu, "rows": len(rows), "passed": passed,
            "python_processes": 0, "model_calls": agent_calls + user_calls,
            "agent_calls": agent_calls, "user_calls": user_calls}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="native-") as tmp:
        result = run_native(args.jobs, args.latency, Path(tmp))
    print(json.dumps(result, indent=2))
    ideal = max(result["model_calls"], 1) * args.latency / args.jobs
    print(f"wall {result['wall']:.1f} s (ideal {ideal:.1f} s, {result['wall'] / ideal:.2f}× ideal), "
          f"cpu {result['cpu']:.1f} s ({result['cpu'] / max(result['rows'], 1):.2f} s/row), "
          f"passed {result['passed']}/{result['rows']}")
    return 0 if result["rows"] == 22 and result["passed"] == result["rows"] else 1


if __name__ == "__main__":
    sys.exit(main())
