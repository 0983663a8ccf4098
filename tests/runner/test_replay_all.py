"""Offline: every suite replayed from its golden cassettes through the runner and real
``promptfoo eval``, with real tool calls, PRs and cleanup; no model anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_evals.portal.process import PortalProcess
from agent_evals.portal_api import PortalAPI
from agent_evals.runner.run import run


def test_all_suites_replay_offline_and_pass(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run("all", "golden", None, ["-o", str(isolated / "{suite}.json"), "-j", "4"])

    printed = capsys.readouterr().out
    assert code == 0, printed[-3000:]
    assert "NOT GRADED" in printed  # no grader model here: said plainly, never passed
    counts = {}
    for suite in ("spoke-create", "spoke-qa", "spoke-create-overlay"):
        data = json.loads((isolated / f"{suite}.json").read_text())
        rows = data["results"]["results"]
        # the viewer's list tells runs apart; rows keep the order of the case files
        assert data["config"]["description"].startswith(f"{suite} · replay · models as recorded · rev ")
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
            assert metadata.get("cleanup", {}).get("abandoned", []) == [p["id"] for p in metadata["pull_requests"]]
            if suite == "spoke-qa":
                assert row["metadata"]["not_graded"] == ["llm-rubric (rubric): no grader model"]
                assert "rubric" not in row["namedScores"]
    assert counts == {"spoke-create": 22, "spoke-qa": 4, "spoke-create-overlay": 3}

    data = isolated / "data"
    for folder in (data / "portal", data / "portal-spoke-create-overlay"):
        with PortalProcess(data_dir=folder) as portal:
            api = PortalAPI(portal.url)
            assert api.list_pull_requests(status="active") == []
            assert len(api.list_pull_requests(status="abandoned")) >= 3
