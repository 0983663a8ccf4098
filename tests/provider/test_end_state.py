"""The end-state snapshot: a portal that dies after the conversation but before grading makes the
row an error of kind ``system`` (never a failure), and its PRs are cleaned up once a portal is back;
grading needs no portal at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_evals.assertions.leaf_diff import diff
from agent_evals.processes import KitStarter
from agent_evals.packs.spoke.undo import cleanup_test
from agent_evals.packs.spoke.golden import seed_spoke
from agent_evals.golden.selfcheck import grade_row
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.provider.run import call_api
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.packs.spoke.scripts import SpokeCopy, relocate
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from tests.spoke_prs import prs

from .conftest import check_contract, context

COPY = SpokeCopy("[S01]", new_name="crm4-dev-neu", address_space="10.87.0.0/22")


def _expected_changes() -> dict:
    source = seed_spoke("crm-dev-neu")
    return {c.path: c.after for c in diff(source, relocate(source, COPY.new_name, COPY.address_space))}


ASSERTS = [
    {"type": "python", "value": "file://../../assertions/pull_request.py", "metric": "pull_request"},
    {"type": "python", "value": "file://../../assertions/spoke_json_valid.py", "metric": "spoke_json_valid"},
    {"type": "python", "value": "file://../../assertions/input_diff.py", "metric": "input_diff",
     "config": {"source": "crm-dev-neu", "expected_changes": _expected_changes()}},
]
SUITE = Path(__file__).resolve().parents[2] / "evals" / "spoke-create"


def _call(vars_: dict, kit_env: dict[str, str]) -> dict:
    ctx = context("S01", vars_)
    ctx["test"]["assert"] = ASSERTS
    return call_api("", {"config": {"agent": "spoke", "pack": "spoke", "basePath": str(SUITE)}}, ctx)


def test_a_portal_that_dies_before_grading_makes_an_error_row_and_its_pr_is_cleaned_later(
    kit_env: dict[str, str], scripted_llm: ScriptedOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    portal_starter: KitStarter
) -> None:
    scripted_llm.responder = ScriptedConversations([COPY.script()])
    with PortalProcess(starter=portal_starter, data_dir=tmp_path / "data", token="dies-token") as portal:
        monkeypatch.setenv("PORTAL_URL", portal.url)
        monkeypatch.setenv("PORTAL_TOKEN", "dies-token")
        user = {"class": "tests.provider.portal_stopper:StopsThePortal",
                "params": {"request": COPY.request, "portal_pid": portal.pid}}
        row = _call({"simulated_user": user}, kit_env)

    metadata = row["metadata"]
    check_contract(metadata)
    assert row["error"].startswith("[system] could not read the end state for grading: ")
    assert "portal" in row["error"]  # the system's failure names it
    assert metadata["error_kind"] == "system" and metadata["conversation_end"] == "error"
    assert len(prs(metadata)) == 1  # the PR the conversation made is in the record
    with PortalProcess(starter=portal_starter, data_dir=tmp_path / "data", token="dies-token") as back:
        api = PortalAPI(back.url, token="dies-token")
        assert [pr["status"] for pr in api.list_pull_requests()] == ["active"]
        report = cleanup_test({"response": row}, api)  # what the afterEach hook does
        assert [int(e.id) for e in report.undone] == [prs(metadata)[0]["id"]]
        assert api.list_pull_requests(status="active") == []


def test_grading_needs_no_portal(kit_env: dict[str, str], scripted_llm: ScriptedOpenAIServer,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    scripted_llm.responder = ScriptedConversations([COPY.script()])
    row = _call({"user_messages": COPY.fixed_messages()}, kit_env)
    assert "error" not in row, row.get("error")
    with_portal = grade_row(SUITE, ASSERTS, row)
    monkeypatch.setenv("PORTAL_URL", "http://127.0.0.1:9")  # nothing listens: any connection would fail
    monkeypatch.delenv("PORTAL_TOKEN")
    assert grade_row(SUITE, ASSERTS, row) == with_portal == {
        "pull_request": True, "spoke_json_valid": True, "input_diff": True,
    }
