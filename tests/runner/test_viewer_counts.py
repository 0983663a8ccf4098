"""The viewer's counts on the stored result of a real replay (spoke-qa, no judge): a check that was not
graded is no assertion, so it shows neither as passed nor as failed, and the header and each row count
exactly the checks the report counts."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agent_evals.report import load_results
from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)


def viewer_row_counts(grading_result: dict) -> tuple[int, int]:
    """As Promptfoo's viewer counts a row ("N PASS"): every component result is a pass or a fail."""
    components = grading_result.get("componentResults") or []
    passed = sum(1 for c in components if c and c.get("pass"))
    return passed, len(components) - passed


def test_not_graded_checks_are_neither_passed_nor_failed_in_the_viewer(isolated: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "agent_evals.cli", "run", "spoke-qa", "--replay", "-o",
                           str(isolated / "qa.json")], env=dict(os.environ), cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    with sqlite3.connect(f"file:{isolated / 'promptfoo' / 'promptfoo.db'}?mode=ro", uri=True) as db:
        (prompts,) = db.execute("SELECT prompts FROM evals").fetchone()
        rows = [(json.loads(g), json.loads(m)) for g, m in db.execute(
            "SELECT grading_result, metadata FROM eval_results ORDER BY test_idx")]
    (metrics,) = [p["metrics"] for p in json.loads(prompts)]
    loaded = load_results([str(isolated / "qa.json")])
    report_rows = sorted(loaded.rows, key=lambda r: r.test_idx)

    # each row: 3 checks graded and passed (forbidden_tools, used_docs, key_facts); its statements not graded
    assert [viewer_row_counts(g) for g, _ in rows] == [(3, 0)] * 4
    for (grading, metadata), row in zip(rows, report_rows, strict=True):
        assert not any(str(c.get("reason", "")).startswith("NOT GRADED") for c in grading["componentResults"])
        assert metadata["not_graded"] == [
            "expected_statements (statements): the case's cassette holds no judge replies (it was recorded without "
            "a judge)"
        ]
        assert viewer_row_counts(grading) == (sum(c.passed for c in row.checks), sum(not c.passed for c in row.checks))
        assert len(row.not_graded) == 1
    # the header ("12/12 passed") counts the same: not 16/16
    assert (metrics["assertPassCount"], metrics["assertFailCount"]) == (12, 0)
    assert "statements" not in metrics["namedScores"]
