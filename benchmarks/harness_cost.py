"""What the harness costs next to the model: processes and CPU per row, wall time against the ideal.

Runs the 22-case spoke-create suite live through ``agent-evals run`` (the scripted model plays
the golden plans, ``--latency`` seconds per call) in these forms, side by side, at each ``-j``
of ``--jobs`` (default 1, 4 and 8):

* ``fast`` (the suites' default): the provider grades every kit check once in its persistent
  worker and ``hooks/kit.js`` answers the assertions from there; cleanup happens in the worker;
  the workers are forked warm;
* ``cold``: ``fast`` with ``AGENT_EVALS_WARM=0``, every worker a Python of its own, as on macOS
  and under plain ``npx promptfoo eval``;
* ``python`` (``--forms … python``): ``AGENT_EVALS_ASSERTIONS=python``, each kit check in a Python
  process of its own (the public ``assertions/<check>.py`` interface, as plain Promptfoo runs it);
* ``portal`` (``--forms … portal``): ``fast`` without ``PORTAL_URL``, so the run starts its own
  portal as ``npm run eval`` does: its first model request waits for the portal (whose start
  Promptfoo's overlaps: ``runner/system_handoff.py``), and its CPU counts the portal's too.

In the other forms the portal runs outside the measured processes (``PORTAL_URL``), so the CPU
counted is the harness's own: the runner, Promptfoo and its workers, assertion and hook processes.
Python process starts are counted by a shim given to Promptfoo as its interpreter. The ideal wall
time is Σ model latency / j. Another form, ``native``, is Promptfoo's own machinery doing
comparable work (see ``native_equivalent.py``); pass ``--native`` to include it.

The forms make different numbers of model calls (the native form's user is Promptfoo's own), so
the table gives the harness time (wall − ideal) and the CPU per model call as well as per run,
and the seconds from the start of ``agent-evals run`` to the first request the model receives.

    .venv/bin/python benchmarks/harness_cost.py [--latency 0.3] [--jobs 1 4 8] [--forms fast cold python portal]
        [--native] [--marginal]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from agent_evals.golden.record import build_scripts  # noqa: E402
from agent_evals.packs.spoke.portal.process import PortalProcess  # noqa: E402
from agent_evals.suites.discovery import select  # noqa: E402
from agent_evals.testing.conversations import ScriptedConversations  # noqa: E402
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer, fixed_latency  # noqa: E402

from python_starts import children_cpu, counting_python, python_starts  # noqa: E402

KEEP = ("PATH", "HOME", "LANG", "TMPDIR")


class FirstRequest:
    """Wrap the scripted model's responder: the time of the first request after :meth:`arm`."""

    def __init__(self, responder: Any) -> None:
        self.responder, self.armed_at, self.first_at = responder, 0.0, None
        self._lock = threading.Lock()

    def arm(self) -> None:
        self.armed_at, self.first_at = time.perf_counter(), None

    def __call__(self, request: Any) -> Any:
        with self._lock:
            if self.first_at is None:
                self.first_at = time.perf_counter()
        return self.responder(request)

    def seconds(self) -> float:
        return (self.first_at or float("nan")) - self.armed_at


def run_form(form: str, jobs: int, server: ScriptedOpenAIServer, portal: PortalProcess, tmp: Path,
             repeat: int = 1, first: FirstRequest | None = None) -> dict:
    tmp.mkdir(parents=True, exist_ok=True)
    shim, counter = counting_python(tmp, f"python-{form}-{repeat}")
    env = {k: v for k, v in os.environ.items() if k in KEEP}
    env.update(OPENAI_BASE_URL=server.base_url, AGENT_MODEL="agent-model", USER_MODEL="user-model", JUDGE_MODEL="none",
               LLM_MAX_RETRIES="0", PROMPTFOO_CONFIG_DIR=str(tmp / "promptfoo"), PROMPTFOO_PYTHON=str(shim),
               AGENT_EVALS_DATA_DIR=str(tmp / f"data-{form}-{repeat}" / "portal"))
    if form != "portal":  # the shared portal of this -j; the portal form's run starts its own
        env.update(PORTAL_URL=portal.url, PORTAL_TOKEN=portal.token or "")
    if form == "python":
        env["AGENT_EVALS_ASSERTIONS"] = "python"
    if form == "cold":
        env["AGENT_EVALS_WARM"] = "0"
    out = tmp / f"{form}.json"
    requests_before = server.request_count
    cpu_before = children_cpu()
    if first is not None:
        first.arm()
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agent_evals.cli", "run", "spoke-create", "-j", str(jobs),
                           "-o", str(out), "--no-cache", "--no-check", "--repeat", str(repeat)], env=env, cwd=ROOT, capture_output=True,
                          text=True)
    wall = time.perf_counter() - started
    cpu = children_cpu() - cpu_before
    if done.returncode != 0:
        print(done.stdout[-3000:], file=sys.stderr)
    rows = json.loads(out.read_text())["results"]["results"]
    calls = server.request_count - requests_before
    return {"form": form, "jobs": jobs, "wall": wall, "cpu": cpu, "rows": len(rows), "passed": sum(r["success"] for r in rows),
            "python_processes": sum(python_starts(counter, tmp / f"data-{form}-{repeat}" / "runs")), "model_calls": calls,
            "first_request": first.seconds() if first is not None else float("nan")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--forms", nargs="+", default=["fast", "cold"], choices=["fast", "cold", "python", "portal"])
    parser.add_argument("--native", action="store_true", help="also run Promptfoo's own equivalent")
    parser.add_argument("--marginal", action="store_true",
                        help="also run the fast form with --repeat 3: the CPU of one more row, apart from the "
                             "run's fixed cost (Promptfoo's and the workers' start-up)")
    args = parser.parse_args()
    scripts = ScriptedConversations(build_scripts(select("spoke-create")[0]))
    results = []
    first = FirstRequest(fixed_latency(scripts, args.latency))
    with tempfile.TemporaryDirectory() as tmp_name, ScriptedOpenAIServer(first) as server:
        tmp = Path(tmp_name)
        for jobs in args.jobs:
            with PortalProcess(data_dir=tmp / f"portal-data-{jobs}", token=PortalProcess.new_token()) as portal:
                for form in args.forms:
                    results.append(run_form(form, jobs, server, portal, tmp / f"j{jobs}", first=first))
                    print(f"-j {jobs} {form}: {results[-1]}", flush=True)
                if args.marginal:
                    results.append({**run_form("fast", jobs, server, portal, tmp / f"j{jobs}", repeat=3),
                                    "form": "fast×3"})
                    print(f"-j {jobs} fast×3: {results[-1]}", flush=True)
            if args.native:
                from native_equivalent import run_native

                results.append({**run_native(jobs, args.latency, tmp / f"j{jobs}"), "jobs": jobs})
                print(f"-j {jobs} native: {results[-1]}", flush=True)
    print(f"\nspoke-create, 22 cases, {args.latency * 1000:.0f} ms per model call, {os.cpu_count()} cores; "
          "harness = wall − ideal (ideal = Σ model latency / j)")
    print(f"{'-j':>3} {'form':<8} {'calls':>6} {'wall s':>7} {'ideal s':>8} {'harness s':>10} {'ms/call':>8} "
          f"{'cpu s':>7} {'cpu ms/call':>12} {'py procs/row':>13} {'1st call s':>10} {'passed':>7}")
    for r in results:
        calls = max(r["model_calls"], 1)
        ideal = calls * args.latency / r["jobs"]
        harness = r["wall"] - ideal
        print(f"{r['jobs']:>3} {r['form']:<8} {r['model_calls']:>6} {r['wall']:>7.1f} {ideal:>8.1f} {harness:>10.1f} "
              f"{harness / calls * 1000:>8.1f} {r['cpu']:>7.1f} {r['cpu'] / calls * 1000:>12.1f} "
              f"{r['python_processes'] / max(r['rows'], 1):>13.2f} {r.get('first_request', float('nan')):>10.2f} "
              f"{r['passed']:>4}/{r['rows']}")
    for jobs in args.jobs:
        once = next((r for r in results if r["form"] == "fast" and r["jobs"] == jobs), None)
        thrice = next((r for r in results if r["form"] == "fast×3" and r["jobs"] == jobs), None)
        if once and thrice:
            marginal = (thrice["cpu"] - once["cpu"]) / (thrice["rows"] - once["rows"])
            fixed = once["cpu"] - marginal * once["rows"]
            print(f"-j {jobs} fast: {marginal:.3f} s of CPU per additional row, {fixed:.1f} s per run (Promptfoo, "
                  "runner, workers' start-up)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
