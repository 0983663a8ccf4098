"""Scoring 10,000 stored conversations with the live policy's reference-free checks (no judge).

A JSONL file of ``--conversations`` conversations in the portal's stored form is written first:
each a variant of spoke-create's C01 golden conversation (2 turns, get_spoke → validate →
create_spoke_pull_request, the real tool results, about 14 KB a line); one in five calls a
forbidden tool, one in seven loops, one in eleven has a failed tool call, every one created a pull
request. A real portal serves the end state: 10 real pull requests (the conversations refer to them
in turn) and the schema, which the policy's ``spoke_json_valid`` reads (once per pull request and
once per run: :class:`agent_evals.live.scoring.LiveSnapshots`).

Timed in a child process with ``--jobs`` scoring workers (default 2, the cores of the target machine;
the peak memory is the child's and each worker's peak, added): reading the file for the
sample, reading the sample again, scoring every conversation with ``evals/live-policy.yaml``
(``--no-judge``: the judged checks are NOT GRADED), writing the eval file row by row and the live
report. Not timed: writing the input, starting the portal, and ``promptfoo import`` of the eval
(Promptfoo's own time; ``--import`` times it too).

Targets: under 30 s and under 500 MB (the machine has 2 cores; the scoring uses one). Exit status 1
when one is missed.

    .venv/bin/python benchmarks/live_scoring.py [--conversations 10000] [--import]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S, TARGET_MB = 30.0, 500.0
PULL_REQUESTS = 10


def write_conversations(path: Path, count: int, pr_urls: list[tuple[int, str]]) -> None:
    from agent_evals.live.stored import conversation_from_dict
    from agent_evals.record import RunRecord

    cassette = json.loads((ROOT / "evals" / "spoke-create" / "golden" / "C01.json").read_text())
    template = cassette["record"]
    start = time.time() - 3600
    with path.open("w") as out:
        for n in range(count):
            record = copy.deepcopy(template)
            calls = record["tool_calls"]
            if n % 5 == 0:
                calls.append({**calls[0], "id": "x", "name": "complete_pull_request", "outcome": "refused",
                              "is_error": True, "result": "not one of your tools", "index": len(calls) + 1})
            if n % 7 == 0:
                calls += [{**calls[0], "id": f"l{i}", "index": len(calls) + 1 + i} for i in range(2)]
            if n % 11 == 0:
                calls[0] = {**calls[0], "outcome": "tool_error", "is_error": True, "result": "unknown spoke"}
            for index, call in enumerate(calls, start=1):
                call["index"] = index
            pr_id, url = pr_urls[n % len(pr_urls)]
            record["side_effects"] = [{"kind": "pull_request", "id": str(pr_id), "url": url}]
            record["case_id"] = f"conv-{n:06d}"
            record["user"] = {"kind": "human", "model": None}
            RunRecord.from_metadata(record)  # it reads back
            at = start + n * 0.3
            line = {"id": f"conv-{n:06d}", "user_id": f"user-{n % 97}", "agent": record["agent"],
                    "created_at": _iso(at), "updated_at": _iso(at + 20), "status": "open",
                    "feedback": {"rating": "down", "comment": None, "at": _iso(at + 30)} if n % 13 == 0 else None,
                    "record": record, "history": [], "turn_log": []}
            out.write(json.dumps(conversation_from_dict(line).to_dict()) + "\n")  # the portal's form


def _iso(epoch: float) -> str:
    from agent_evals.live.stored import iso

    return iso(epoch)


def child(path: Path, portal: str, token: str, output: Path, jobs: int) -> None:
    """The timed part (run in its own process)."""
    from agent_evals.live.eval_file import EvalWriter
    from agent_evals.live.live_report import LiveReport
    from agent_evals.live.policy import load_policy
    from agent_evals.live.sampling import SampleSpec
    from agent_evals.live.parallel import scored_rows
    from agent_evals.live.sources import ALL_TIME, from_files

    started = time.perf_counter()
    policy, problems = load_policy(ROOT / "evals" / "live-policy.yaml")
    assert policy is not None, problems
    selection = from_files([path], ALL_TIME, ("spoke",), SampleSpec())
    sampled = time.perf_counter()
    report = LiveReport()
    outcomes: dict[str, int] = {}
    with EvalWriter(output, "LIVE · benchmark", {"format": "benchmark"}) as writer:
        for scoring in scored_rows(selection.conversations, selection.strata, policy=policy, portal=portal,
                                   token=token, judge=False, jobs=jobs, expected=selection.selected):
            assert scoring.facts is not None, scoring.warning
            writer.add(scoring.text, scoring.facts)
            report.add(scoring.facts)
            outcomes[scoring.facts.outcome] = outcomes.get(scoring.facts.outcome, 0) + 1
    done = time.perf_counter()
    cpu = sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 if jobs > 1 else 0.0
    print(json.dumps({"rows": writer.rows, "outcomes": outcomes, "sample_s": sampled - started,
                      "total_s": done - started, "cpu_s": cpu, "pass_rate": report.total.rate,
                      "memory_mb": own + jobs * workers if jobs > 1 else own, "main_mb": own, "worker_mb": workers}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--import", dest="import_eval", action="store_true", help="also time promptfoo import")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2: the machine's cores)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if os.environ.get("LIVE_PROFILE"):
            import cProfile
            import pstats

            cProfile.runctx("child(Path(args.child[0]), args.child[1], args.child[2], Path(args.child[3]), 1)",
                            globals(), locals(), os.environ["LIVE_PROFILE"])
            pstats.Stats(os.environ["LIVE_PROFILE"], stream=sys.stderr).sort_stats("cumulative").print_stats(40)
            return 0
        child(Path(args.child[0]), args.child[1], args.child[2], Path(args.child[3]), args.jobs)
        return 0
    from agent_evals.packs.spoke.portal.process import PortalProcess
    from agent_evals.packs.spoke.portal.api import PortalAPI

    with tempfile.TemporaryDirectory(prefix="live-scoring-") as tmp, PortalProcess(
        data_dir=Path(tmp) / "data", token=PortalProcess.new_token(), log_file=Path(tmp) / "portal.log"
    ) as portal:
        api = PortalAPI(portal.url, token=portal.token)
        config = json.loads((ROOT / "evals" / "spoke-create" / "golden" / "C01.json").read_text())
        submitted = next(c for c in config["record"]["tool_calls"] if c["name"] == "create_spoke_pull_request")
        prs = []
        for n in range(PULL_REQUESTS):
            body = {"spoke_name": "crm-dev-weu", "config": submitted["arguments"]["config"], "title": f"PR {n}"}
            made = api.create_fixture_pull_request(body, {"X-Eval-Id": "bench", "X-Test-Id": f"t{n}"})
            prs.append((made["id"], made["url"]))
        source = Path(tmp) / "conversations.jsonl"
        write_conversations(source, args.conversations, prs)
        size_mb = source.stat().st_size / 1e6
        output = Path(tmp) / "live.json"
        done = subprocess.run([sys.executable, __file__, "--jobs", str(args.jobs), "--child", str(source), portal.url,
                               portal.token or "", str(output)], capture_output=True, text=True, check=False)
        if done.returncode != 0 or os.environ.get("LIVE_PROFILE"):
            print(done.stderr)
            return 2
        result = json.loads(done.stdout.strip().splitlines()[-1])
        peak_mb = result["memory_mb"]
        print(f"input: {args.conversations} conversations, {size_mb:.0f} MB of JSONL; eval file {output.stat().st_size / 1e6:.0f} MB")
        print(f"outcomes: {result['outcomes']} (pass rate {result['pass_rate']:.1%})")
        print(f"reading for the sample: {result['sample_s']:.2f} s")
        print(f"scoring {result['rows']} conversations (read, score, eval file, report): {result['total_s']:.2f} s "
              f"(target < {TARGET_S:.0f} s; CPU {result['cpu_s']:.2f} s, the process's start and imports included); "
              f"peak memory {peak_mb:.0f} MB (target < {TARGET_MB:.0f} MB: this process {result['main_mb']:.0f} MB + "
              f"{args.jobs} worker(s) at most {result['worker_mb']:.0f} MB each)")
        if args.import_eval:
            from agent_evals.runner.promptfoo_process import promptfoo_command, promptfoo_env

            started = time.perf_counter()
            env = {**promptfoo_env(), "PROMPTFOO_CONFIG_DIR": str(Path(tmp) / "promptfoo")}
            imported = subprocess.run(promptfoo_command("import", str(output)), env=env, cwd=ROOT,
                                      capture_output=True, text=True, check=False)
            print(f"promptfoo import: {time.perf_counter() - started:.1f} s (exit {imported.returncode})")
        return 0 if result["total_s"] < TARGET_S and peak_mb < TARGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())
