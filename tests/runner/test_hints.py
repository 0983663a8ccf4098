"""Every command the runner prints as a hint runs as printed, in a normal shell at the project's root
(``agent-evals`` itself is in .venv/bin, not on PATH): the whole report, the merge of shards (named for
the files the shards really wrote) and the merged eval's report."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

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
    """One replay per shard of spoke-qa (each run of Promptfoo costs seconds of CPU, so the hints share
    them): the first shard's whole-report hint runs as printed and reports that shard's cases; the merge
    hint names the files the shards wrote and runs as printed, and so does the merged eval's report hint."""
    out = isolated / "out"
    written = []
    for shard in ("1/2", "2/2"):
        done = _shell(f"npm run eval -- spoke-qa --replay --shard {shard} -o '{out}/{{suite}}.json'")
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        written += [line.split(": ", 1)[1] for line in done.stdout.splitlines() if line.startswith("shard ")
                    and " of spoke-qa: " in line]
        if shard == "1/2":
            _the_whole_report_hint_runs_as_printed(done.stdout)
    assert sorted(written) == [f"{out}/spoke-qa.shard-1-of-2.json", f"{out}/spoke-qa.shard-2-of-2.json"]
    merge = next(line.strip() for line in done.stdout.splitlines() if line.strip().startswith("npx agent-evals merge"))
    assert merge == f"npx agent-evals merge {out}/*.shard-*-of-2.json"
    merged = _shell(merge)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    report = _shell(_hint(merged.stdout, "report:"))
    assert report.returncode == 0, report.stdout + report.stderr
    assert all(case in report.stdout for case in ("Q01", "Q02", "Q03", "Q04"))


def _the_whole_report_hint_runs_as_printed(printed: str) -> None:
    command = _hint(printed, "whole report:")
    assert command.startswith("npm run report -- run-")
    ran = [line.split()[0] for line in printed.splitlines() if re.fullmatch(r"  Q\d\d +PASS .*", line)]
    assert ran and set(ran) < {"Q01", "Q02", "Q03", "Q04"}, printed
    report = _shell(command)
    assert report.returncode == 0, report.stdout + report.stderr
    assert all(case in report.stdout for case in ran), report.stdout
