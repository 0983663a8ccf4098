"""Offline: every suite replayed from its golden cassettes through the runner and real
``promptfoo eval``, with real tool calls, PRs and cleanup; no model anywhere. It runs the
README's quick start as written: ``./evals.sh`` (with flags it passes on to ``agent-evals run``)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.processes import KitStarter
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.report import build_report, check_gate, load_gate, load_results
from tests.conftest import PROJECT_ROOT
from tests.spoke_prs import abandoned, prs


def test_all_suites_replay_offline_and_pass(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, portal_starter: KitStarter
) -> None:
    monkeypatch.setenv("CI", "true")  # as on a CI machine, where Promptfoo logs its own progress lines
    done = subprocess.run(["./evals.sh", "-o", str(isolated / "{suite}.json"), "-j", "4"], cwd=PROJECT_ROOT,
                          env=dict(os.environ), capture_output=True, text=True, timeout=600)

    printed = done.stdout
    assert done.returncode == 0, printed[-3000:] + done.stderr[-2000:]
    assert done.stderr.strip() == "", done.stderr[-3000:]  # nothing on stderr either: no warning, no log line
    assert "NOT GRADED" in printed  # no grader model here: said plainly, never passed
    counts = {}
    _every_line_is_the_kits(printed)
    for suite in SUITES:
        data = json.loads((isolated / f"{suite}.json").read_text())
        rows = data["results"]["results"]
        # the viewer's list tells runs apart; rows keep the order of the case files
        description = data["config"]["description"]
        assert description.startswith(f"{suite} · replay · models as recorded · rev ")
        # not graded, said where people look: the eval list (no judge here), besides each row's entries:
        # the suites whose judged checks decide rows (the QA statements, the variants' goals)
        assert description.endswith("model-graded checks NOT GRADED (no judge)") == (
            suite in ("spoke-qa", "spoke-create-variants")
        ), description
        ids = [r["testCase"]["metadata"]["id"] for r in sorted(rows, key=lambda r: r["testIdx"])]
        assert ids == sorted(ids), ids
        assert all(row["success"] for row in rows), [r["testCase"]["description"] for r in rows if not r["success"]]
        counts[suite] = len(rows)
        for row in rows:
            metadata = row["response"]["metadata"]
            assert metadata["conversation_end"] == "done"
            # a perfect run shows every named score at 100%
            assert all(score == 1 for score in row["namedScores"].values()), (row["testCase"]["description"],
                                                                              row["namedScores"])
            # one entry per check, each with its metric, answered from the provider's grading
            kit = [a for a in row["testCase"]["assert"] if "assertions/kit.js:" in str(a.get("value"))]
            components = [c for c in row["gradingResult"]["componentResults"] if c["assertion"] in kit]
            assert len(components) == len(kit) == len(metadata["checks"]) >= 1
            assert [c["assertion"]["metric"] for c in components] == [c["metric"] for c in metadata["checks"]]
            # cleaned up in the worker, also a row without PRs: the hook starts no process for it
            assert metadata["cleanup"]["by"] == "provider"
            assert abandoned(metadata["cleanup"]) == [p["id"] for p in prs(metadata)]
            if suite == "spoke-qa":  # the golden cassettes hold no judge replies
                assert row["metadata"]["not_graded"] == [
                    "expected_statements (statements): the case's cassette holds no judge replies (it was recorded "
                    "without a judge)"
                ]
                assert "statements" not in row["namedScores"]
    # a replay runs suites side by side (one's Promptfoo start-up beside the others' rows)
    assert _side_by_side(isolated / "promptfoo" / "promptfoo.db"), "the suites ran one after the other"
    # Promptfoo's response cache (which never hits for these rows) wrote nothing
    assert not (isolated / "promptfoo" / "cache").exists()
    assert counts == {"spoke-create": 22, "spoke-qa": 4, "spoke-create-overlay": 3, "integration-qa": 13, "release-notes": 12,
                      "spoke-create-variants": 48}

    _the_gate_holds(isolated)
    _the_viewer_counts_what_the_report_counts(isolated)
    data = isolated / "data"
    for folder in (data / "portal", data / "portal-spoke-create-overlay"):
        with PortalProcess(starter=portal_starter, data_dir=folder) as portal:
            api = PortalAPI(portal.url)
            assert api.list_pull_requests(status="active") == []
            assert len(api.list_pull_requests(status="abandoned")) >= 3
            assert api.list_fixtures() == {"spokes": [], "pull_requests": []}  # fixtures removed too


def _the_gate_holds(isolated: Path) -> None:
    """The report of the run, from its -o files and from its manifest (``latest``), holds evals/gate.yaml."""
    suites = SUITES
    from_files = load_results([str(isolated / f"{suite}.json") for suite in suites])
    from_run = load_results(["latest"])  # the run's manifest names its six evals
    assert [e.suite for e in from_run.evals] == suites
    assert {e.mode for e in from_run.evals} == {"replay"} and len(from_run.runs) == 1
    for loaded in (from_files, from_run):
        report = build_report(loaded.evals, loaded.runs, loaded.rows)
        assert report.complete, report.incomplete
        assert report.totals.cases == 54 + 48 and report.totals.failed == 0
        # without judge replies in the golden cassettes: the QA statements and each variant's judged check
        assert report.totals.not_graded == 4 + 48
        # a replay (the models as recorded, judged checks not graded) cannot hold the release gate ...
        verdict = check_gate(load_gate(PROJECT_ROOT / "evals" / "gate.yaml"), report)
        assert verdict.decision == "undecided" and verdict.exit_code == 2, verdict.lines()
        assert [rule.name for rule in verdict.of("undecided")] == ["replay", "not_graded"]
        assert verdict.lines()[-1] == "gate cannot decide: replay, not_graded (exit 2)"
        # ... unless the gate file says it may; then every other rule holds
        allowed = replace(load_gate(PROJECT_ROOT / "evals" / "gate.yaml"), allow_replay=True, allow_not_graded=True)
        assert check_gate(allowed, report).holds


def viewer_row_counts(grading_result: dict) -> tuple[int, int]:
    """As Promptfoo's viewer counts a row ("N PASS"): every component result is a pass or a fail."""
    components = grading_result.get("componentResults") or []
    passed = sum(1 for c in components if c and c.get("pass"))
    return passed, len(components) - passed


def _the_viewer_counts_what_the_report_counts(isolated: Path) -> None:
    """The viewer's counts of spoke-qa's stored eval (no judge): a check that was not graded is no
    assertion, so it shows neither as passed nor as failed, and the header and each row count
    exactly the checks the report counts."""
    with sqlite3.connect(f"file:{isolated / 'promptfoo' / 'promptfoo.db'}?mode=ro", uri=True) as db:
        [(eval_id, prompts)] = [(i, p) for i, p, d in db.execute("SELECT id, prompts, description FROM evals")
                               if d.startswith("spoke-qa ")]
        rows = [(json.loads(g), json.loads(m)) for g, m in db.execute(
            "SELECT grading_result, metadata FROM eval_results WHERE eval_id = ? ORDER BY test_idx", (eval_id,))]
    (metrics,) = [p["metrics"] for p in json.loads(prompts)]
    report_rows = sorted(load_results([str(isolated / "spoke-qa.json")]).rows, key=lambda r: r.test_idx)

    # each row: 3 checks graded and passed (forbidden_tools, used_docs, key_facts); its statements not graded
    assert [viewer_row_counts(g) for g, _ in rows] == [(3, 0)] * 4
    for (grading, metadata), row in zip(rows, report_rows, strict=True):
        assert not any(str(c.get("reason", "")).startswith("NOT GRADED") for c in grading["componentResults"])
        assert len(metadata["not_graded"]) == len(row.not_graded) == 1
        assert viewer_row_counts(grading) == (sum(c.passed for c in row.checks), sum(not c.passed for c in row.checks))
    # the header ("12/12 passed") counts the same: not 16/16
    assert (metrics["assertPassCount"], metrics["assertFailCount"]) == (12, 0)
    assert "statements" not in metrics["namedScores"]


LINES = [re.compile(p) for p in (
    r"NOTE: no grader model is configured .+",
    r"=== suite [\w-]+ \(run-[0-9a-f]{12}\) ===",
    r"portal: http://127\.0\.0\.1:\d+ \(data: \S+\)",
    r"  [A-Z]\d\d +PASS +\d+\.\ds( +\(\d+ not graded\))?",
    r"[\w-]+: \d+ passed, 0 failed, 0 error\(s\)(, \d+ check\(s\) not graded)? in \d+ s; eval eval-\S+",
    r"report: 102 case\(s\), 102 run\(s\): 102 passed, 0 failed, 0 error\(s\); pass\^k \(k=runs\) 1\.00",
    r"not graded: 52 check\(s\) \(left out of the scores\)",
    r"complete",
    r"whole report: npm run report -- run-[0-9a-f]{12}",
    r"Results are in the Promptfoo viewer: npm run eval:view",
)]


def _every_line_is_the_kits(printed: str) -> None:
    """The terminal of a replay of every suite, line by line: the kit's lines only (no box table, no
    Node warnings, no hints that lead nowhere), one per case, a summary per suite and one for the run."""
    lines = [line for line in printed.splitlines() if line.strip()]
    strays = [line for line in lines if not any(p.fullmatch(line) for p in LINES)]
    assert strays == [], strays
    cases = [line.split()[0] for line in lines if LINES[3].fullmatch(line)]
    assert len(cases) == len(set(cases)) == 54 + 48
    assert sum(1 for line in lines if LINES[4].fullmatch(line)) == 6
    assert lines[-1] == "Results are in the Promptfoo viewer: npm run eval:view"
    # suites ran side by side, yet each one's lines come together, in the suites' order
    headers = [line.split()[2] for line in lines if LINES[1].fullmatch(line)]
    assert headers == SUITES
    for suite, header in zip(SUITES, [i for i, line in enumerate(lines) if LINES[1].fullmatch(line)]):
        end = next(i for i in range(header, len(lines)) if lines[i].startswith(f"{suite}: "))
        assert all(LINES[2].fullmatch(line) or LINES[3].fullmatch(line) for line in lines[header + 1:end])


SUITES = ["spoke-create", "spoke-qa", "spoke-create-overlay", "integration-qa", "release-notes", "spoke-create-variants"]


def _side_by_side(db: Path) -> list[tuple[str, str]]:
    """Pairs of suites whose evals overlapped in time: one created before the other had finished
    (Promptfoo's ``created_at`` and ``durationMs`` of each eval)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        evals = [(description.split(" · ")[0], created, created + json.loads(results)["durationMs"])
                 for description, created, results in con.execute(
                     "SELECT description, created_at, results FROM evals ORDER BY created_at")]
    return [(a, b) for i, (a, _, a_end) in enumerate(evals) for b, b_start, _ in evals[i + 1:] if b_start < a_end]
