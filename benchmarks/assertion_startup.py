"""Time one complete assertion call as Promptfoo makes it, for every assertion file.

Promptfoo starts a new Python process per assertion call: it writes ``[output, context]``
to a JSON file and runs its ``wrapper.py <script> get_assert <in.json> <out.json>``. This
script does the same (with Promptfoo's own wrapper from node_modules when installed), with
a realistic context, against a stub portal on 127.0.0.1 for the assertions that call the
REST API, and reports the median wall time of ``--runs`` calls after one warm-up call.

    .venv/bin/python benchmarks/assertion_startup.py [--runs 10] [--python PATH]

Exit status 1 when a median exceeds ``--target`` milliseconds (default 250).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PROMPTFOO_WRAPPER = ROOT / "node_modules" / "promptfoo" / "dist" / "src" / "python" / "wrapper.py"
FALLBACK_WRAPPER = """
import importlib.util, json, sys
script, method, src, dst = sys.argv[1:5]
sys.path.insert(0, script.rsplit("/", 1)[0])
spec = importlib.util.spec_from_file_location("assertion", script)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
with open(src) as fp:
    args = json.load(fp)
with open(dst, "w") as fp:
    json.dump({"type": "final_result", "data": getattr(module, method)(*args)}, fp)
"""

SOURCE = {
    "name": "billing",
    "owner": "team-payments",
    "settings": {"retries": 3, "timeout": 10, "regions": ["eu", "us"], "limits": {"rps": 100, "burst": 20}},
    "routes": [{"path": f"/r{i}", "methods": ["GET", "POST"], "auth": True} for i in range(20)],
}
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["name", "settings"],
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z-]+$"},
        "owner": {"type": "string"},
        "settings": {
            "type": "object",
            "properties": {
                "retries": {"type": "integer", "minimum": 0, "maximum": 10},
                "timeout": {"type": "number"},
                "regions": {"type": "array", "items": {"enum": ["eu", "us", "asia"]}},
            },
        },
        "routes": {"type": "array", "items": {"type": "object", "required": ["path"]}},
    },
}

CONFIGS: dict[str, dict[str, Any]] = {
    "tool_sequence": {
        "expected": ["get_spoke", "validate_spoke_config", "create_spoke_pull_request"],
        "mode": "in_order",
    },
    "tool_not_executed": {"tools": ["delete_*", "merge_pull_request"]},
    "argument_match": {
        "tool": "create_spoke_pull_request",
        "args": {"spoke_name": "billing", "config": {"settings": {"retries": 5}}},
    },
    "input_diff": {
        "source": "billing",
        "expected_changes": {"/settings/retries": 5},
        "ignore_paths": ["/owner"],
    },
    "spoke_json_valid": {},
    "pull_request": {"expect": "created"},
    "function_call_metrics": {
        "expected_calls": [
            {"name": "get_spoke", "arguments": {"name": "billing"}},
            {
                "name": "create_spoke_pull_request",
                "arguments": {"spoke_name": "billing", "title": "Raise retries"},
            },
        ]
    },
    "conversation": {"max_turns": 4, "expected_steps": 3},
}


def _metadata(portal_url: str) -> dict[str, Any]:
    config = json.loads(json.dumps(SOURCE))
    config["settings"]["retries"] = 5
    calls = [
        ("get_spoke_schema", {}, {"schema": SCHEMA}),
        ("get_spoke", {"name": "billing"}, {"name": "billing", "config": SOURCE}),
        ("validate_spoke_config", {"config": config}, {"valid": True, "errors": []}),
        (
            "create_spoke_pull_request",
            {
                "spoke_name": "billing",
                "config": config,
                "title": "Raise retries",
                "description": "Raise billing retries to 5",
            },
            {"id": 1, "url": f"{portal_url}/repos/spokes/pullrequest/1"},
        ),
    ]
    reply = f"I opened {portal_url}/repos/spokes/pullrequest/1 to raise retries to 5."
    return {
        "agent_evals": 1,
        "tool_calls": [
            {
                "name": n,
                "arguments": a,
                "raw_arguments": json.dumps(a),
                "result": r,
                "is_error": False,
                "turn": 1 + (i > 1),
            }
            for i, (n, a, r) in enumerate(calls)
        ],
        "transcript": [
            {
                "role": "user",
                "content": "Please raise the retries of billing to 5.",
                "turn": 1,
                "tool_calls": [],
            },
            {
                "role": "assistant",
                "content": "Here is the plan; shall I go ahead?",
                "turn": 1,
                "tool_calls": ["get_spoke"],
            },
            {"role": "user", "content": "Yes.", "turn": 2, "tool_calls": []},
            {"role": "assistant", "content": reply, "turn": 2, "tool_calls": ["create_spoke_pull_request"]},
        ],
        "pull_requests": [{"id": 1, "url": f"{portal_url}/repos/spokes/pullrequest/1"}],
        "turns": 2,
        "conversation_end": "done",
        "final_reply": reply,
        "agent": {
            "name": "spoke-agent",
            "model": "gpt-4.1",
            "temperature": 0.0,
            "instructions_sha256": "ab" * 32,
        },
        "usage": {
            "agent": {"prompt_tokens": 9000, "completion_tokens": 400, "total_tokens": 9400, "calls": 5},
            "user": {"prompt_tokens": 800, "completion_tokens": 60, "total_tokens": 860, "calls": 2},
        },
        "case_id": "raise-retries",
    }


def _context(name: str, portal_url: str) -> list[Any]:
    """``[output, context]`` shaped like Promptfoo 0.123's assertion context."""
    meta = _metadata(portal_url)
    vars_ = {"request": "Raise retries", "__evalId": "eval-bench", "__evalStepId": "s1", "__repeatIndex": 0}
    test = {
        "description": "raise retries",
        "vars": vars_,
        "metadata": {"tags": ["smoke"]},
        "assert": [
            {"type": "python", "value": f"file://../../assertions/{name}.py", "config": CONFIGS[name]}
        ],
        "options": {},
    }
    context = {
        "prompt": "Raise retries of billing to 5",
        "vars": vars_,
        "test": test,
        "provider": {
            "id": "file://providers/agent.py",
            "label": "agent",
            "config": {"agent": "spoke-agent", "basePath": str(ROOT)},
        },
        "providerResponse": {"output": meta["final_reply"], "metadata": meta, "tokenUsage": {"total": 10260}},
        "config": CONFIGS[name],
        "metadata": meta,
    }
    return [meta["final_reply"], context]


class _Portal(BaseHTTPRequestHandler):
    """Just enough of the portal's REST API for the benchmark."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        url = f"http://127.0.0.1:{self.server.server_address[1]}"
        pr = {
            "id": 1,
            "url": f"{url}/repos/spokes/pullrequest/1",
            "status": "active",
            "validation_status": "succeeded",
            "validation_errors": [],
        }
        body = {
            "/api/spokes/billing": {"name": "billing", "file": "spokes/billing.json", "config": SOURCE},
            "/api/schema": {"schema": SCHEMA, "additional_schema": None, "file_name_rules": None},
            "/api/pull-requests/1": pr,
        }.get(self.path)
        data = json.dumps(body or {"detail": "Not Found"}).encode()
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _time_call(
    python: str, wrapper: Path, script: Path, args_file: Path, out_file: Path, env: dict[str, str]
) -> float:
    start = time.perf_counter()
    subprocess.run(
        [python, str(wrapper), str(script), "get_assert", str(args_file), str(out_file)],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    elapsed = (time.perf_counter() - start) * 1000
    result = json.loads(out_file.read_text())["data"]
    if not result.get("pass"):
        raise SystemExit(f"{script.name} did not pass in the benchmark: {result.get('reason')}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--target", type=float, default=250.0, help="milliseconds")
    args = parser.parse_args(argv)

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Portal)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    portal_url = f"http://127.0.0.1:{server.server_address[1]}"
    env = {"PATH": "/usr/bin:/bin", "PORTAL_URL": portal_url, "PORTAL_TOKEN": "bench-token"}
    slow = []
    with tempfile.TemporaryDirectory() as tmp:
        wrapper = PROMPTFOO_WRAPPER
        if not wrapper.exists():
            wrapper = Path(tmp) / "wrapper.py"
            wrapper.write_text(FALLBACK_WRAPPER)
        shown = wrapper.relative_to(ROOT) if wrapper.is_relative_to(ROOT) else "fallback"
        print(
            f"python {args.python}; wrapper {shown}; {args.runs} runs after 1 warm-up; "
            f"target {args.target:.0f} ms"
        )
        baseline_runs = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run([args.python, "-c", "pass"], env=env, check=True)
            baseline_runs.append((time.perf_counter() - start) * 1000)
        print(f"{'interpreter only (python -c pass)':<36} median {statistics.median(baseline_runs):6.1f} ms")
        for name in CONFIGS:
            script = ROOT / "assertions" / f"{name}.py"
            args_file, out_file = Path(tmp) / f"{name}.json", Path(tmp) / f"{name}.out.json"
            args_file.write_text(json.dumps(_context(name, portal_url)))
            _time_call(args.python, wrapper, script, args_file, out_file, env)  # warm-up (bytecode cache)
            times = [
                _time_call(args.python, wrapper, script, args_file, out_file, env) for _ in range(args.runs)
            ]
            median = statistics.median(times)
            flag = "" if median < args.target else "  OVER TARGET"
            print(f"{name:<36} median {median:6.1f} ms  (min {min(times):6.1f}, max {max(times):6.1f}){flag}")
            if flag:
                slow.append(name)
    server.shutdown()
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
