"""Case fixtures in the portal: pull requests made for a test case and spokes put on main for it."""

from __future__ import annotations

import httpx

from agent_evals.packs.spoke.portal.process import PortalProcess

from .helpers import git, new_spoke

TRACE = {"X-Eval-Id": "eval-fx", "X-Test-Id": "I01#abc"}


def test_fixture_pull_request_is_validated_for_real_and_marked(rest: httpx.Client) -> None:
    bad = new_spoke("fixture-dev-weu", space="10.81.0.0/22")
    bad["location"] = "moon-central"
    answer = rest.post(
        "/api/fixtures/pull-requests",
        json={"spoke_name": bad["name"], "config": bad, "title": "Add spoke fixture-dev-weu"},
        headers=TRACE,
    )
    assert answer.status_code == 200, answer.text
    pr = answer.json()
    assert (pr["status"], pr["validation_status"], pr["created_by"]) == ("active", "failed", "fixture")
    assert (pr["eval_id"], pr["test_id"]) == ("eval-fx", "I01#abc")
    assert any(e["path"] == "/location" for e in pr["validation_errors"])
    listed = rest.get("/api/fixtures", params={"test_id": "I01#abc"}).json()
    assert listed == {"spokes": [], "pull_requests": [pr["id"]]}


def test_abandoned_fixture_and_bad_requests(rest: httpx.Client) -> None:
    config = new_spoke("fixture2-dev-weu", space="10.82.0.0/22")
    answer = rest.post(
        "/api/fixtures/pull-requests",
        json={"spoke_name": config["name"], "config": config, "title": "t", "status": "abandoned"},
        headers=TRACE,
    )
    assert answer.json()["status"] == "abandoned"
    completed = rest.post(
        "/api/fixtures/pull-requests",
        json={"spoke_name": config["name"], "config": config, "title": "t", "status": "completed"},
    )
    assert completed.status_code == 400 and "active or abandoned" in completed.text
    unknown_source = rest.post(
        "/api/fixtures/pull-requests",
        json={"spoke_name": config["name"], "config": config, "title": "t", "source_spoke": "no-such-spoke"},
    )
    assert unknown_source.status_code == 404
    typo = rest.post("/api/fixtures/pull-requests", json={"spoke_name": "x", "confg": {}, "title": "t"})
    assert typo.status_code == 422


def test_fixture_spoke_on_main_then_removed(rest: httpx.Client, portal: PortalProcess) -> None:
    trace = {"X-Eval-Id": "eval-sp", "X-Test-Id": "I02#def"}
    config = new_spoke("extra-dev-weu", space="10.83.0.0/22")
    before = rest.get("/api/health").json()["spokes"]
    added = rest.post("/api/fixtures/spokes", json={"name": "extra-dev-weu", "config": config}, headers=trace)
    assert added.json() == {"name": "extra-dev-weu", "file": "spokes/extra-dev-weu.json"}
    assert rest.get("/api/spokes/extra-dev-weu").json()["config"] == config
    assert rest.get("/api/health").json()["spokes"] == before + 1
    assert "Fixture: add spokes/extra-dev-weu.json" in git(portal.data_dir, "log", "-1", "--format=%B", "main")

    again = rest.post("/api/fixtures/spokes", json={"name": "extra-dev-weu", "config": config}, headers=trace)
    assert again.status_code == 409
    seed = rest.post("/api/fixtures/spokes", json={"name": "crm-dev-neu", "config": config})
    assert seed.status_code == 409
    overlapping = new_spoke("overlap-dev-weu", space="10.83.0.0/22")
    invalid = rest.post("/api/fixtures/spokes", json={"name": "overlap-dev-weu", "config": overlapping})
    assert invalid.status_code == 400 and "does not pass validation" in invalid.text

    removed = rest.post("/api/fixtures/remove", params={"eval_id": "eval-sp"}).json()
    assert removed == {"removed": ["spoke extra-dev-weu"], "abandoned": []}
    assert rest.get("/api/spokes/extra-dev-weu").status_code == 404
    assert rest.get("/api/health").json()["spokes"] == before
    assert rest.post("/api/fixtures/remove", params={"eval_id": "eval-sp"}).json()["removed"] == []
    assert rest.post("/api/fixtures/remove").status_code == 400


def test_remove_abandons_fixture_prs_only(rest: httpx.Client, portal: PortalProcess) -> None:
    from .helpers import Mcp

    trace = {"X-Eval-Id": "eval-rm", "X-Test-Id": "I03#123"}
    fixture = new_spoke("fx3-dev-weu", space="10.84.0.0/22")
    fixture_pr = rest.post(
        "/api/fixtures/pull-requests", json={"spoke_name": fixture["name"], "config": fixture, "title": "t"},
        headers=trace,
    ).json()
    agents = new_spoke("agent3-dev-weu", space="10.85.0.0/22")
    agent_pr = Mcp(portal.url, portal.token).ok(
        "create_spoke_pull_request",
        {"spoke_name": agents["name"], "config": agents, "title": "t", "description": "d"},
        headers={**trace, "X-Created-By": "agent-evals:spoke"},
    )
    removed = rest.post("/api/fixtures/remove", params={"test_id": "I03#123"}).json()
    assert removed == {"removed": [], "abandoned": [fixture_pr["id"]]}
    assert rest.get(f"/api/pull-requests/{agent_pr['id']}").json()["status"] == "active"
