"""Case fixtures end to end through the provider, on a real portal: made before the conversation,
recorded in the run record, named in the user's messages and the checks' configs, and removed
after a pass, a failure and an error; a fixture the portal rejects is a config error before any
model call, with nothing left behind."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_evals.conversation.cassette import load_cassette, save_cassette
from agent_evals.golden.selfcheck import drop_key_fact
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.provider.run import call_api
from agent_evals.suites.files import load_suite
from agent_evals.suites.discovery import select
from tests.spoke_prs import prs

SUITE = select("integration-qa")[0]


def _test(case_id: str) -> dict[str, Any]:
    for test in load_suite(SUITE).tests:
        if test.case_id == case_id:
            return {"description": test.description, "vars": copy.deepcopy(dict(test.vars)),
                    "metadata": dict(test.metadata), "assert": [dict(a) for a in test.asserts]}
    raise LookupError(case_id)


def _call(test: dict[str, Any], replay: Path, eval_id: str = "eval-fixtures", **extra: Any) -> dict[str, Any]:
    config = dict(yaml.safe_load(SUITE.config.read_text())["providers"][0]["config"])
    config.update(replay=str(replay), basePath=str(SUITE.folder), **extra)
    return call_api("", {"config": config}, {"vars": test["vars"], "test": test, "evaluationId": eval_id})


@pytest.fixture
def api(live_portal: PortalProcess, monkeypatch: pytest.MonkeyPatch) -> PortalAPI:
    monkeypatch.setenv("PORTAL_URL", live_portal.url)
    monkeypatch.setenv("PORTAL_TOKEN", live_portal.token or "")
    return PortalAPI(live_portal.url, token=live_portal.token)


def _left_behind(api: PortalAPI, answer: dict[str, Any]) -> dict[str, Any]:
    test_id = answer["metadata"]["trace"]["test_id"]
    return api.list_fixtures(test_id=test_id) | {
        "active": [pr["id"] for pr in api.list_pull_requests(status="active", test_id=test_id)]
    }


NOTHING = {"spokes": [], "pull_requests": [], "active": []}


def test_a_passing_case_gets_its_fixture_and_leaves_nothing(api: PortalAPI) -> None:
    answer = _call(_test("I01"), SUITE.folder / "golden")
    assert "error" not in answer, answer.get("error")
    meta = answer["metadata"]
    (fixture,) = meta["fixtures"]
    assert (fixture["kind"], fixture["key"], fixture["validation_status"]) == ("pull_request", "failing", "failed")
    assert fixture["validation_errors"] == ["address-space-overlap-spoke"]
    assert meta["transcript"][0]["content"] == f"My pull request {fixture['url']} failed the validation gate. Why?"
    assert prs(meta) == []  # the fixture is not the agent's doing
    read = [c for c in meta["tool_calls"] if c["name"] == "get_pull_request"]
    assert read and read[0]["arguments"] == {"id": fixture["id"]}  # the recorded id, translated
    checks = {c["metric"]: c["pass"] for c in meta["checks"]}
    assert checks["reads_the_pr"] is True and all(checks.values()), checks  # args: {id: $fixture.failing.id}
    assert api.get_pull_request(fixture["id"])["status"] == "abandoned"
    assert _left_behind(api, answer) == NOTHING
    assert meta["cleanup"]["fixtures"]["abandoned"] == [fixture["id"]]


def test_a_fixture_spoke_is_on_main_for_the_conversation_only(api: PortalAPI) -> None:
    answer = _call(_test("I08"), SUITE.folder / "golden")
    assert "error" not in answer, answer.get("error")
    result = next(c for c in answer["metadata"]["tool_calls"] if c["name"] == "get_spoke")
    assert result["outcome"] == "ok" and result["result"]["config"]["tags"]["owner"] == "ledger-team@contoso.com"
    assert answer["metadata"]["cleanup"]["fixtures"]["removed"] == ["spoke ledger-test-sdc"]
    with pytest.raises(Exception, match="404"):
        api.get_spoke("ledger-test-sdc")
    assert _left_behind(api, answer) == NOTHING


def test_a_failing_case_leaves_nothing(api: PortalAPI, tmp_path: Path) -> None:
    broken = drop_key_fact(load_cassette(SUITE.folder / "golden" / "I01.json"), ["overlap"])
    save_cassette(broken, tmp_path / "I01.json")
    answer = _call(_test("I01"), tmp_path)
    assert "error" not in answer
    assert {c["metric"]: c["pass"] for c in answer["metadata"]["checks"]}["key_facts"] is False
    assert _left_behind(api, answer) == NOTHING


def test_an_error_in_the_conversation_leaves_nothing(api: PortalAPI, tmp_path: Path) -> None:
    (tmp_path / "I01.json").write_text("{not json")
    answer = _call(_test("I01"), tmp_path)
    assert answer["error"].startswith("[replay] ")
    assert _left_behind(api, answer) == NOTHING


@pytest.mark.parametrize(
    ("fixtures", "message"),
    [
        ([{"spoke": {"copy": "crm-dev-neu", "name": "crm-dev-weu"}}],  # the same range as its copy
         "fixture 1: the portal rejected it: "),
        ([{"pull_request": {"copy": "crm-dev-neu", "name": "crm9-dev-neu", "address_space": "10.20.200.0/22",
                            "validation": "failed"}}],
         "fixture 1: the validation gate answered succeeded, the case expects failed"),
        ([{"pull_request": {"key": "failing", "copy": "crm-dev-neu", "name": "crm-dev-weu", "validation": "failed"}},
          {"pull_request": {"copy": "crm-dev-neu", "name": "BAD NAME"}}],
         "fixture 2: the portal rejected it: "),
    ],
    ids=["rejected", "gate-differs", "second-rejected"],
)
def test_a_fixture_the_portal_rejects_is_a_config_error_before_any_model_call(
    api: PortalAPI, fixtures: list[dict[str, Any]], message: str
) -> None:
    test = _test("I01")
    test["vars"]["fixtures"] = fixtures
    answer = _call(test, SUITE.folder / "golden", allow_stale=True)  # the fixtures are not the recorded ones
    assert answer["error"].startswith(f"[config] {message}"), answer["error"]
    meta = answer["metadata"]
    assert meta["tool_calls"] == [] and meta["usage"]["agent"]["calls"] == 0
    assert _left_behind(api, answer) == NOTHING


def test_changed_fixtures_make_the_recording_stale(api: PortalAPI) -> None:
    test = _test("I01")
    test["vars"]["fixtures"][0]["pull_request"]["changes"] = {"/location": "northeurope"}
    answer = _call(test, SUITE.folder / "golden")
    assert answer["error"].startswith("[replay] ") and "the case's fixtures changed" in answer["error"]
    assert _left_behind(api, answer) == NOTHING
