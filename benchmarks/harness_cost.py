"""What the harness costs next to the model: processes and CPU per row, wall time against the ideal.

Runs the 22-case spoke-create suite live through ``agent-evals run`` (the scripted model plays
the golden plans, ``--latency`` seconds per call) in two forms, side by side:

* ``fast`` (the suites' default): the provider grades every kit check once in its persistent
  worker and ``hooks/kit.js`` answers the assertions from there; cleanup happens in the worker;
* ``python``: ``AGENT_EVALS_ASSERTIONS=python``, each kit check in a Python process of its own
  (the public ``assertions/<check>.py`` interface, as plain Promptfoo runs it).

The portal runs outside the measured processes (``PORTAL_URL``), so the CPU counted is the
harness's own: the runner, Promptfoo and its workers, assertion and hook processes. Python
process starts are counted by a shim given to Promptfoo as its interpreter. The ideal wall
time is Σ model latency / j. A third form, ``native``, is Promptfoo's own machinery doing
comparable work (see ``native_equivalent.py``); pass ``--native`` to include it.

    .venv/bin/python benchmarks/harness_cost.py [--latency 0.3] [--jobs 4] [--forms fast python] [--native] [--marginal]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from agent_evals.golden.record import build_scripts  # noqa: E402
from agent_evals.portal.process import PortalProcess  # noqa: E402
from agent_evals.runner.suites import select  # noqa: E402
from agent_evals.testing.conversations import ScriptedConversations  # noqa: E402
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer, fixed_latency  # noqa: E402

from python_starts import children_cpu, counting_python, python_starts  # noqa: E402

KEEP = ("PATH", "HOME", "LANG", "TMPDIR")


def run_form(form: str, jobs: int, server: ScriptedOpenAIServer, portal: PortalProcess, tmp: Path,
             repeat: int = 1) -> dict:
    shim, counter = counting_python(tmp, f"python-{form}-{repeat}")
    env = {k: v for k, v in os.environ.items() if k in KEEP}
    env.update(OPENAI_BASE_URL=server.base_url, AGENT_MODEL="agent-model", USER_MODEL="user-model", JUDGE_MODEL="none",
               LLM_MAX_RETRIES="0", PORTAL_URL=portal.url, PORTAL_TOKEN=portal.token or "",
               PROMPTFOO_CONFIG_DIR=str(tmp / "promptfoo"), PROMPTFOO_PYTHON=str(shim),
               AGENT_EVALS_DATA_DIR=str(tmp / f"data-{form}-{repeat}" / "portal"))
    if form == "python":
        env["AGENT_EVALS_ASSERTIONS"] = "python"
    out = tmp / f"{form}.json"
    requests_before = server.request_count
    cpu_before = children_cpu()
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
    return {"form": form, "wall": wall, "cpu": cpu, "rows": len(rows), "passed": sum(r["success"] for r in rows),
            "python_processes": sum(python_starts(counter, tmp / f"data-{form}-{repeat}" / "runs")), "model_calls": calls}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--forms", nargs="+", default=["fast", "python"], choices=["fast", "python"])
    parser.add_argument("--native", action="store_true", help="also run Promptfoo's own equivalent")
    parser.add_argument("--marginal", action="store_true",
                        help="also run the fast form with --repeat 3: the CPU of one more row, apart from the "
                             "run's fixed cost (Promptfoo's and the workers' start-up)")
    args = parser.parse_args()
    scripts = ScriptedConversations(build_scripts(select("spoke-create")[0]))
    results = []
    with tempfile.TemporaryDirectory() as tmp_name, ScriptedOpenAIServer(fixed_latency(scripts, args.latency)) as server:
        tmp = Path(tmp_name)
        with PortalProcess(data_dir=tmp / "portal-data", token=PortalProcess.new_token()) as portal:
            for form in args.forms:
                results.append(run_form(form, args.jobs, server, portal, tmp))
                print(f"{form}: {results[-1]}", flush=True)
            if args.marginal:
                results.append({**run_form("fast", args.jobs, server, portal, tmp, repeat=3), "form": "fast×3"})
                print(f"fast×3: {results[-1]}", flush=True)
        if args.native:
            from native_equivalent import run_native

            results.append(run_native(args.jobs, args.latency, tmp))
            print(f"native: {results[-1]}", flush=True)
    print(f"\nspoke-create, 22 cases, {args.latency * 1000:.0f} ms per model call, -j {args.jobs}, "
          f"{os.cpu_count()} cores")
    print(f"{'form':<8} {'wall s':>7} {'ideal s':>8} {'× ideal':>8} {'cpu s':>7} {'cpu/row s':>10} "
          f"{'py procs/row':>13} {'passed':>7}")
    for r in results:
        ideal = r["model_calls"] * args.latency / args.jobs
        print(f"{r['form']:<8} {r['wall']:>7.1f} {ideal:>8.1f} {r['wall'] / ideal:>8.2f} {r['cpu']:>7.1f} "
              f"{r['cpu'] / r['rows']:>10.2f} {r['python_processes'] / r['rows']:>13.2f} {r['passed']:>4}/{r['rows']}")
    once = next((r for r in results if r["form"] == "fast"), None)
    thrice = next((r for r in results if r["form"] == "fast×3"), None)
    if once and thrice:
        marginal = (thrice["cpu"] - once["cpu"]) / (thrice["rows"] - once["rows"])
        fixed = once["cpu"] - marginal * once["rows"]
        print(f"fast: {marginal:.3f} s of CPU per additional row, {fixed:.1f} s per run (Promptfoo, runner, "
              f"workers' start-up)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
