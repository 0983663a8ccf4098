"""The cleanup hook and the cleanup logic, without Promptfoo (the runner tests run them through it)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_evals.packs.spoke.created_prs import pull_request
from agent_evals.packs.spoke.undo import PR_WORDS, abandon, pull_request_ids_of_row
from agent_evals.record import SideEffect
from agent_evals.hooks import extension_hook
from agent_evals.packs.spoke.portal.api import PortalError, PortalNotFound

BASE = "http://127.0.0.1:8400"


class FlakyPortal:
    """A stand-in for PortalAPI.abandon_pull_request with scripted outcomes per PR."""

    def __init__(self, outcomes: dict[int, list[Any]]) -> None:
        self.outcomes = outcomes
        self.calls: list[int] = []

    def abandon_pull_request(self, pr_id: int) -> dict[str, Any]:
        self.calls.append(pr_id)
        outcome = self.outcomes[pr_id].pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return {"id": pr_id, "status": outcome}


def test_abandon_retries_then_reports() -> None:
    portal = FlakyPortal({
        1: [PortalError("HTTP 503", status=503), "abandoned"],             # retried, then fine
        2: [PortalError("HTTP 409", status=409)],                           # completed: left alone
        3: [PortalNotFound("HTTP 404", status=404)],                        # unknown: reported
        4: [PortalError("boom", status=500)] * 4,                           # gives up after retries
        5: ["abandoned"],
    })
    waits: list[float] = []

    report = abandon(portal, [1, 2, 3, 4, 5, 5], sleep=waits.append)  # type: ignore[arg-type]

    assert report.undone == [pull_request(1), pull_request(5)]
    assert report.already_gone == [pull_request(2)]
    assert report.failed == {pull_request(3): "no such pull request", pull_request(4): "boom"}
    assert report.summary() == "abandoned 2 PR(s), 2 failed: #3: no such pull request; #4: boom"
    assert report.as_dict()["failed"] == {"pull_request 3": "no such pull request", "pull_request 4": "boom"}
    assert portal.calls.count(4) == 4 and portal.calls.count(5) == 1  # duplicates abandoned once
    assert waits == [0.2, 0.2, 0.5, 1.0]


def test_a_row_names_its_prs_in_metadata_and_in_output_urls_of_this_portal_only() -> None:
    row = {
        "response": {
            "metadata": {"side_effects": [{"kind": "pull_request", "id": "7", "url": f"{BASE}/repos/spokes/pullrequest/7"},
                                          {"kind": "branch", "id": "8"}, {"kind": "pull_request", "id": "x"}]},
            "output": f"see {BASE}/repos/spokes/pullrequest/9 and http://elsewhere:1/repos/spokes/pullrequest/11",
        },
        "metadata": {"pull_requests": [{"id": 7}, {"id": 6}, {"id": "x"}]},  # a version-2 record's, read too
    }
    assert pull_request_ids_of_row(row, BASE) == [7, 6, 9]
    assert pull_request_ids_of_row({}, BASE) == []  # a row whose provider raised has no response


def test_after_each_never_breaks_the_eval_when_the_portal_is_gone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORTAL_URL", "http://127.0.0.1:9")  # nothing listens there
    row = {"response": {"metadata": {"side_effects": [{"kind": "pull_request", "id": "3", "url": "x"}],
                                     "trace": {"test_id": "C01#1"}}}}

    out = extension_hook("afterEach", {"test": {}, "result": row})

    assert out is not None
    assert "not reachable" in out["result"]["metadata"]["cleanup"]["error"]


def test_after_each_without_a_portal_url_reports_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PORTAL_URL", raising=False)
    out = extension_hook("afterEach", {"test": {}, "result": {}})
    assert out is not None and "PORTAL_URL" in out["result"]["metadata"]["cleanup"]["error"]


def test_a_report_says_each_kind_in_its_systems_words() -> None:
    from agent_evals.system import CleanupReport, UndoWords

    assert CleanupReport(words=(PR_WORDS,)).summary() == "abandoned 0 PR(s)"  # the first kind is said at 0
    mixed = CleanupReport(undone=[SideEffect("branch", "b"), pull_request(4), SideEffect("branch", "c")],
                          kept=[pull_request(9)], words=(PR_WORDS, UndoWords("branch", "removed", "branch")))
    assert mixed.summary() == "abandoned 1 PR(s), removed 2 branch(s), left 1 PR(s) of runs still going (#9)"
    assert CleanupReport(undone=[SideEffect("file", "a.md")]).summary() == "undid 1 file side effect(s)"
    assert CleanupReport().summary() == "nothing to undo" and not CleanupReport().acted
    failed = CleanupReport(failed={SideEffect("branch", "b"): "locked"})
    assert failed.acted and failed.summary() == "1 failed: branch b: locked"
