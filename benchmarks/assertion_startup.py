"""Time one complete assertion call as Promptfoo makes it, for every assertion file.

Promptfoo starts a new Python process per assertion call: it writes ``[output, context]``
to a JSON file and runs its ``wrapper.py <script> get_assert <in.json> <out.json>``. This
script does the same (with Promptfoo's own wrapper from node_modules when installed), with
a realistic context (a run record with its end-state snapshot: no assertion opens a
connection), and reports the median wall time of ``--runs`` calls after one warm-up call.

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
import time
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
    "reply_contains": {"all": ["retries", "5"]},
    "reply_grounded": {"kinds": ["url", "number"]},
    "tool_order": {"rules": [{"before": "get_spoke", "then": "create_spoke_pull_request"}]},
    "tool_errors": {"max_rate": 0.25},
    "repeated_calls": {"max_repeats": 2},
    "goal_reached": {},
    "expected_statements": {"statements": ["The assistant raised the retries to 5", "It gave the link"]},
    "trajectory_quality": {"expected": ["get_spoke", "create_spoke_pull_request"]},
    "protected_branches": {"protected": ["main", "release/*"]},
    "changelog_entry": {"expect": "none"},
}
# the release pack's end state: a repository nothing changed (its checks read it as their snapshot)
_REFS = {"branches": {"main": "a" * 40}, "tags": {}, "reachable": {"main": ["a" * 40]}}
REPOSITORY = {"base": "main", "start": _REFS, "end": _REFS, "head": "main", "head_sha": "a" * 40}


def _metadata(portal_url: str) -> dict[str, Any]:
    """A run record (v3) with its end-state snapshot, as the provider returns it."""
    from agent_evals.packs.spoke.created_prs import pull_request
    from agent_evals.record import AgentInfo, End, RunRecord, Snapshot, ToolCall, Turn, Usage

    config = json.loads(json.dumps(SOURCE))
    config["settings"]["retries"] = 5
    pr_url = f"{portal_url}/repos/spokes/pullrequest/1"
    calls = [
        ("get_spoke_schema", {}, {"schema": SCHEMA}),
        ("get_spoke", {"name": "billing"}, {"name": "billing", "config": SOURCE}),
        ("validate_spoke_config", {"config": config}, {"valid": True, "errors": []}),
        (
            "create_spoke_pull_request",
            {"spoke_name": "billing", "config": config, "title": "Raise retries", "description": "Raise retries to 5"},
            {"id": 1, "url": pr_url},
        ),
    ]
    done = [
        ToolCall.request(f"c{i}", n, json.dumps(a)).with_outcome("ok", r).placed(turn=1 + (i > 1), index=i + 1)
        for i, (n, a, r) in enumerate(calls)
    ]
    reply = f"I opened {pr_url} to raise retries to 5."
    pr = {"id": 1, "url": pr_url, "status": "active", "validation_status": "succeeded", "validation_errors": []}
    record = RunRecord(
        case_id="raise-retries",
        agent=AgentInfo("spoke-agent", "gpt-4.1", 0.0, "ab" * 32),
        turns=[
            Turn("Please raise the retries of billing to 5.", "Here is the plan; shall I go ahead?", tuple(done[:2])),
            Turn("Yes.", reply, tuple(done[2:])),
        ],
        side_effects=[pull_request(1, pr_url)],
        end=End("done"),
        snapshot=Snapshot(portal_url, {
            "pull_requests": [pr],
            "schema": {"schema": SCHEMA, "additional_schema": None, "file_name_rules": None},
            "spoke/billing": {"name": "billing", "file": "spokes/billing.json", "config": SOURCE},
            "repository": REPOSITORY,
        }),
    )
    record.add_usage("agent", Usage(9000, 400, 9400, 5))
    record.add_usage("user", Usage(800, 60, 860, 2))
    record.judged = [_judged(name) for name in ("goal_reached", "expected_statements", "trajectory_quality")]
    return record.to_metadata()


def _judged(name: str) -> Any:
    """The judge's verdicts on one judged check, as the provider records them."""
    from agent_evals.record import Judgement, Verdict, judgement_key

    questions = CONFIGS[name].get("statements") or ["the goal" if name == "goal_reached" else "the route"]
    verdicts = tuple(Verdict(q, True, "It holds.", 0.9 if name == "trajectory_quality" else None) for q in questions)
    return Judgement(name, judgement_key(name, CONFIGS[name]), verdicts, model="gpt-4.1")


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

    portal_url = "http://127.0.0.1:8400"  # only named in the record: the assertions open no connection
    env = {"PATH": "/usr/bin:/bin"}
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
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
