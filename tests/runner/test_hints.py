"""Every command the runner prints as a hint runs as printed, in a normal shell at the project's root
(``agent-evals`` itself is in .venv/bin, not on PATH): the whole report, the merge of shards (named for
the files the shards really wrote) and the merged eval's report."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from agent_evals.report.command import load_report
from agent_evals.report.format_json import report_to_json
from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)


def _shell(command: str) -> subprocess.CompletedProcess[str]:
    """As a user types it: bash at the project's root, with no .venv/bin on PATH."""
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if ".venv" not in p)
    return subprocess.run(["bash", "-c", command], cwd=PROJECT_ROOT, env={**os.environ, "PATH": path},
                          capture_output=True, text=True, timeout=300)


def _hint(output: str, prefix: str) -> str:
    (line,) = [line.strip() for line in output.splitlines() if line.strip().startswith(prefix)]
    return line.removeprefix(prefix).strip()


def test_the_whole_report_and_merge_hints_run_as_printed(isolated: Path) -> None:
    """One replay per shard of four release-notes cases (each run of Promptfoo costs seconds of CPU, so
    the hints and the second pack's sharding share them): the first shard's whole-report hint runs as
    printed and reports that shard's cases; the merge hint names the files the shards wrote and runs as
    printed, and so does the merged eval's report hint. The merge is one complete eval of the four
    cases, and each shard made its run's repositories (data/release/<run id>) and removed them."""
    out = isolated / "out"
    written = []
    for shard in ("1/2", "2/2"):
        done = _shell(f"npm run eval -- release-notes --replay --filter-pattern '^R0[1-4] ' --shard {shard} "
                      f"-o '{out}/{{suite}}.json'")
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        written += [line.split(": ", 1)[1] for line in done.stdout.splitlines() if line.startswith("shard ")
                    and " of release-notes: " in line]
        if shard == "1/2":
            _the_whole_report_hint_runs_as_printed(done.stdout)
    assert sorted(written) == [f"{out}/release-notes.shard-1-of-2.json", f"{out}/release-notes.shard-2-of-2.json"]
    merge = next(line.strip() for line in done.stdout.splitlines() if line.strip().startswith("npx agent-evals merge"))
    assert merge == f"npx agent-evals merge {out}/*.shard-*-of-2.json"
    merged = _shell(merge)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert merged.stdout.splitlines()[0].startswith("merge: release-notes: shard(s) 1, 2 of 2, 4 row(s)"), merged.stdout
    report = _shell(_hint(merged.stdout, "report:"))
    assert report.returncode == 0, report.stdout + report.stderr
    assert all(case in report.stdout for case in ("R01", "R02", "R03", "R04"))

    with sqlite3.connect(isolated / "promptfoo" / "promptfoo.db") as db:
        (merged_id,) = [row[0] for row in db.execute("SELECT id FROM evals")]  # the shards' evals stayed in their runs
    whole = report_to_json(load_report([merged_id]))
    assert whole["complete"] and whole["totals"]["runs"] == 4 and whole["totals"]["passed"] == 4, whole["totals"]
    rows = json.loads((out / "release-notes.json").read_text())["results"]["results"]
    assert sorted(r["testCase"]["metadata"]["id"] for r in rows) == ["R01", "R02", "R03", "R04"]
    assert all(r["success"] for r in rows)
    release = isolated / "data" / "release"
    assert release.is_dir() and list(release.iterdir()) == []  # the shards made their repositories there, and removed them


def _the_whole_report_hint_runs_as_printed(printed: str) -> None:
    command = _hint(printed, "whole report:")
    assert command.startswith("npm run report -- run-")
    ran = [line.split()[0] for line in printed.splitlines() if re.fullmatch(r"  R\d\d +PASS .*", line)]
    assert ran and set(ran) < {"R01", "R02", "R03", "R04"}, printed
    report = _shell(command)
    assert report.returncode == 0, report.stdout + report.stderr
    assert all(case in report.stdout for case in ran), report.stdout
