"""The runner end to end through real ``promptfoo eval``: live path with scripted models,
cleanup after a provider error, and ``agent-evals cleanup`` (after a Ctrl-C, with the run's own
portal and with one it was given: tests/runner/test_lifecycle.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_evals.golden.record import build_scripts
from agent_evals.processes import KitStarter
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.runner.run import run
from agent_evals.suites.discovery import select
from agent_evals.testing.conversations import ConversationScript, ScriptedConversations
from agent_evals.testing.scripted_openai import Reply, ScriptedOpenAIServer
from tests.conftest import PROJECT_ROOT, use_scripted_models
from tests.spoke_prs import abandoned, prs

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)

SPOKE_CREATE = select("spoke-create")[0]


@pytest.fixture
def scripted_models(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedOpenAIServer]:
    """The golden plans of spoke-create, played live through the openai client."""
    with ScriptedOpenAIServer(ScriptedConversations(build_scripts(SPOKE_CREATE))) as server:
        use_scripted_models(monkeypatch, server.base_url)  # the golden plans play no judge
        yield server


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    results = json.loads(path.read_text())["results"]["results"]
    return {row["testCase"]["metadata"]["id"]: row for row in results}


def _active_prs(data_dir: Path, starter: KitStarter) -> list[dict[str, Any]]:
    with PortalProcess(data_dir=data_dir, starter=starter) as portal:
        return PortalAPI(portal.url).list_pull_requests(status="active")


SECRET = "sk-test-secret-value-0123456789"


def _files_containing(folder: Path, needle: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_live_run_of_a_create_and_a_blocked_case_then_its_recording_replays_without_a_model(
    isolated: Path, scripted_models: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch, portal_starter: KitStarter
) -> None:
    """A live run (recording its conversations: a second live run would cost seconds of CPU for nothing
    new), then the recording replayed with the model gone."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)  # sent to the (scripted) model, never written anywhere
    out, cassettes = isolated / "results.json", isolated / "cassettes"
    code = run("spoke-create", None, str(cassettes),
               ["--filter-pattern", "C01|C18", "-o", str(out), "--no-cache", "-j", "2"])

    assert code == 0
    rows = _rows(out)
    assert set(rows) == {"C01", "C18"}
    created = rows["C01"]
    metadata = created["response"]["metadata"]
    assert [c["name"] for c in metadata["tool_calls"]] == [
        "get_spoke", "validate_spoke_config", "create_spoke_pull_request"
    ]
    assert metadata["conversation_end"] == "done" and metadata["turns"] == 2
    assert metadata["agent"]["model"] == "agent-model"
    pr_id = prs(metadata)[0]["id"]
    assert abandoned(created["metadata"]["cleanup"]) == [pr_id]  # the afterEach hook's report
    assert created["namedScores"]["input_diff"] == 1 and created["namedScores"]["pull_request"] == 1
    blocked = rows["C18"]["response"]["metadata"]
    assert prs(blocked) == [] and blocked["tool_calls"] == []
    assert _active_prs(isolated / "data" / "portal", portal_starter) == []
    assert scripted_models.requests[-1].headers["authorization"] == f"Bearer {SECRET}"
    assert _files_containing(isolated, SECRET) == []  # results, Promptfoo's database, portal data, cassettes
    _the_recording_replays_without_a_model(isolated, cassettes, scripted_models)


def _failing_after_the_pr() -> ScriptedConversations:
    """C01 of the golden plan, but the model fails right after the PR was created."""
    scripts = build_scripts(SPOKE_CREATE)
    agent = next(s for s in scripts if s.key.startswith("Hi! We need a dev network for our CRM app"))
    broken = Reply.error(500, body="model exploded", headers={"x-should-retry": "false"})
    failing = ConversationScript(key=agent.key, agent=[*agent.agent[:4], broken])
    return ScriptedConversations([failing, *[s for s in scripts if s is not agent]])


def test_a_provider_error_after_a_pr_still_cleans_it_up(
    isolated: Path, scripted_models: ScriptedOpenAIServer, portal_starter: KitStarter
) -> None:
    scripted_models.responder = _failing_after_the_pr()
    out = isolated / "results.json"

    code = run("spoke-create", None, None, ["--filter-pattern", "C01", "-o", str(out), "--no-cache"])

    assert code == 100  # an errored row makes the run fail
    row = _rows(out)["C01"]
    assert row["failureReason"] == 2 and "model exploded" in row["error"]
    made = prs(row["response"]["metadata"])
    assert len(made) == 1
    assert abandoned(row["metadata"]["cleanup"]) == [made[0]["id"]]
    assert _active_prs(isolated / "data" / "portal", portal_starter) == []


def test_cleanup_command_abandons_eval_prs_and_nothing_else(
    tmp_path: Path, portal_starter: KitStarter
) -> None:
    from agent_evals.runner.cleanup_command import cleanup_command
    from tests.runner.portal_calls import create_pr

    with PortalProcess(starter=portal_starter, data_dir=tmp_path / "portal", token="cleanup-token") as portal:
        by_person = create_pr(portal, "crm-dev-weu", headers={})
        by_eval = create_pr(portal, "crm-dev-gwc", headers={"X-Eval-Id": "run-1", "X-Test-Id": "C01#x"})
        os.environ["PORTAL_TOKEN"] = "cleanup-token"
        try:
            assert cleanup_command(portal.url, None, None) == 0
        finally:
            del os.environ["PORTAL_TOKEN"]
        api = PortalAPI(portal.url, token="cleanup-token")
        assert api.get_pull_request(by_eval)["status"] == "abandoned"
        assert api.get_pull_request(by_person)["status"] == "active"


def test_qa_statements_are_judged_one_by_one_when_a_judge_is_configured(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    def judge(request: Any) -> Reply:
        body = request.messages[-1]["content"]
        asked.append(body)
        passed = "route table" not in body.split("Statement:")[1]
        return Reply.text(json.dumps({"pass": passed, "reason": "judge says: " + ("yes" if passed else "no route table")}))

    scripts = ScriptedConversations(build_scripts(select("spoke-qa")[0]), judge=judge)
    with ScriptedOpenAIServer(scripts) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("AGENT_MODEL", "agent-model")
        monkeypatch.setenv("JUDGE_MODEL", "judge-model")
        out = isolated / "qa.json"
        code = run("spoke-qa", None, None, ["--filter-pattern", "Q01", "-o", str(out), "--no-cache"])

    row = _rows(out)["Q01"]
    assert code == 100 and not row["success"]  # one statement does not hold, so the case fails
    assert row["namedScores"]["statements"] == pytest.approx(6 / 7)
    assert row["namedScores"]["key_facts"] == 1  # the offline check still passes
    assert "not_graded" not in row["metadata"]
    assert len(asked) == 7 and all(body.count("Statement:") == 1 for body in asked)  # each statement alone
    assert all("one route table per subnet" in body for body in asked)  # the agent's answer reached the judge
    assert "NO  'The answer says a route table is created per subnet" in row["gradingResult"]["reason"]
    assert row["response"]["metadata"]["usage"]["judge"]["calls"] == 7


def _the_recording_replays_without_a_model(isolated: Path, cassettes: Path,
                                          scripted_models: ScriptedOpenAIServer) -> None:
    assert sorted(p.name for p in (cassettes / "spoke-create").iterdir()) == ["C01.json", "C18.json"]
    scripted_models.responder = lambda request: Reply.error(500, body="no model today",
                                                            headers={"x-should-retry": "false"})
    out = isolated / "replayed.json"
    code = run("spoke-create", str(cassettes), None, ["--filter-pattern", "C01|C18", "-o", str(out), "--no-cache"])

    assert code == 0
    rows = _rows(out)
    assert set(rows) == {"C01", "C18"} and all(r["success"] for r in rows.values())
    assert all(r["response"]["metadata"]["replay"]["cassette"] == f"{case}.json" for case, r in rows.items())
