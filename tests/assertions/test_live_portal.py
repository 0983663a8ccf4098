"""input_diff, spoke_json_valid, pull_request and the REST client against a real portal process.

PRs are created the way the agent creates them: the portal's MCP tool
``create_spoke_pull_request`` over streamable HTTP. The end-state snapshot the assertions
grade is taken from the portal as the provider takes it (``take_snapshot`` with the spoke
pack and the case's checks). Skipped when the portal package is not available.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_evals.processes import KitStarter
from agent_evals.packs.spoke.checks import input_diff, pull_request, spoke_json_valid
from agent_evals.assertions.registry import kit_checks
from agent_evals.packs.spoke.portal.api import PortalAPI, PortalError, PortalNotFound, pull_request_url
from agent_evals.packs.spoke.snapshot import take_snapshot
from agent_evals.packs.spoke.created_prs import pull_request as pull_request_effect
from agent_evals.packs.spoke.created_prs import snapshot_pull_requests
from agent_evals.record import RunRecord, SideEffect

from ._assertion_support import call, metadata

process = pytest.importorskip("agent_evals.packs.spoke.portal.process")
SPOKE = "crm-dev-neu"
NEW_OWNER = "crm-admins@contoso.com"
EVAL_ID = "live-assertions"


def create_pull_request(portal: Any, config: dict[str, Any], title: str) -> dict[str, Any]:
    """Call the portal's MCP tool like the agent does; return the PR it answers."""
    import httpx2
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    async def go() -> Any:
        headers = {"Authorization": f"Bearer {portal.token}", "X-Eval-Id": EVAL_ID, "X-Test-Id": title}
        http = httpx2.AsyncClient(headers=headers, timeout=30)
        async with Client(streamable_http_client(portal.url + "/mcp/", http_client=http)) as client:
            return await client.call_tool(
                "create_spoke_pull_request",
                {"spoke_name": SPOKE, "config": config, "title": title, "description": "live assertion test"},
            )

    result = asyncio.run(go())
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


@pytest.fixture(scope="module")
def portal(tmp_path_factory: pytest.TempPathFactory, portal_starter: KitStarter) -> Iterator[Any]:
    root: Path = tmp_path_factory.mktemp("live-portal")
    with process.PortalProcess(
        data_dir=root / "data", token=process.PortalProcess.new_token(), log_file=root / "portal.log",
        starter=portal_starter,
    ) as running:
        yield running


@pytest.fixture(scope="module")
def api(portal: Any) -> PortalAPI:
    return PortalAPI(portal.url, token=portal.token, timeout=30)


@pytest.fixture(scope="module")
def source(api: PortalAPI) -> dict[str, Any]:
    return api.get_spoke(SPOKE)["config"]


@pytest.fixture(scope="module")
def good(portal: Any, source: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    config = copy.deepcopy(source)
    config["tags"]["owner"] = NEW_OWNER
    return config, create_pull_request(portal, config, "good")


@pytest.fixture(scope="module")
def bad(portal: Any, source: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    config = copy.deepcopy(source)
    config["tags"]["owner"] = 5
    config["subnets"][0]["nsgRules"][0]["priority"] = "high"
    return config, create_pull_request(portal, config, "bad")


def run_metadata(
    portal: Any, config: dict[str, Any], pr: dict[str, Any], reply: str | None = None
) -> dict[str, Any]:
    """A conversation that submitted ``config`` and got ``pr``, without a snapshot yet."""
    calls = [
        call("get_spoke", {"name": SPOKE}),
        call("create_spoke_pull_request", {"spoke_name": SPOKE, "config": config}, turn=2, result=pr),
    ]
    reply = reply if reply is not None else f"I opened {pr['url']} for you."
    return metadata(calls, replies=["Shall I?", reply], pull_requests=[pr["id"]], base_url=portal.url)


def with_snapshot(data: dict[str, Any], api: PortalAPI, *checks: tuple[str, Any]) -> dict[str, Any]:
    """``data`` with the end state read from the portal now, for a test asserting ``checks`` (name, config)."""
    asserts = [{"type": "python", "value": f"file://../../assertions/{name}.py", "config": c} for name, c in checks]
    state = take_snapshot(RunRecord.from_metadata(data), kit_checks(asserts), api)
    return {**data, "snapshot": state.to_dict()}


def test_rest_client_against_the_portal(portal: Any, api: PortalAPI, good: tuple) -> None:
    _, pr = good
    assert api.health()["status"] == "ok"
    assert api.get_schema()["schema"]["type"] == "object"
    assert pr["url"] == pull_request_url(portal.url, pr["id"])  # the URL shape the assertions look for
    assert api.get_pull_request(pr["id"])["eval_id"] == EVAL_ID
    assert pr["id"] in [item["id"] for item in api.list_pull_requests(status="active", eval_id=EVAL_ID)]
    assert [item["id"] for item in api.list_pull_requests(test_id="good")] == [pr["id"]]
    with pytest.raises(PortalNotFound):
        api.get_spoke("no-such-spoke")
    with pytest.raises(PortalNotFound):
        api.get_pull_request(99999)
    with pytest.raises(PortalError) as err:
        PortalAPI(portal.url, token="not-the-token", timeout=10).get_schema()  # health is open
    assert err.value.status == 401 and portal.token not in str(err.value)


def test_snapshot_of_the_end_state(portal: Any, api: PortalAPI, good: tuple, source: dict[str, Any]) -> None:
    config, pr = good
    checks = [("input_diff", {"source": name, "expected_changes": {}}) for name in (SPOKE, "no-such-spoke")]
    state = with_snapshot(run_metadata(portal, config, pr), api, *checks)["snapshot"]
    assert state["read_from"] == portal.url
    assert [item["id"] for item in state["resources"]["pull_requests"]] == [pr["id"]]
    assert state["resources"]["pull_requests"][0]["status"] == "active"
    assert state["resources"]["schema"]["schema"]["type"] == "object"
    assert state["resources"][f"spoke/{SPOKE}"]["config"] == source
    assert state["resources"]["spoke/no-such-spoke"] is None


def test_a_side_effect_elsewhere_is_not_read_from_the_portal(portal: Any, api: PortalAPI, good: tuple) -> None:
    """A pack may track side effects on another system (a ticket at desk.example with id 12): the
    snapshot reads only this portal's pull requests, never the portal's PR that shares the id."""
    _, pr = good
    record = RunRecord()
    record.add_side_effect(SideEffect("ticket", str(pr["id"]), f"https://desk.example/tickets/{pr['id']}"))
    record.add_side_effect(pull_request_effect(pr["id"], f"https://desk.example/repos/spokes/pullrequest/{pr['id']}"))
    snapshot = take_snapshot(record, [], api)
    assert snapshot_pull_requests(snapshot) == []  # another kind, and a pull request of another host
    record.add_side_effect(pull_request_effect(pr["id"] + 10**6, pull_request_url(portal.url, pr["id"] + 10**6)))
    assert snapshot_pull_requests(take_snapshot(record, [], api)) == []  # this portal's, but not there
    record = RunRecord()
    record.add_side_effect(pull_request_effect(pr["id"], pull_request_url(portal.url, pr["id"])))
    assert [p["id"] for p in snapshot_pull_requests(take_snapshot(record, [], api))] == [pr["id"]]


def test_input_diff_source_by_name(portal: Any, api: PortalAPI, good: tuple) -> None:
    config, pr = good
    made = {"source": SPOKE, "expected_changes": {"/tags/owner": NEW_OWNER}}
    not_made = {"source": SPOKE, "expected_changes": {"/tags/costCenter": "CC-9999"}}
    data = with_snapshot(run_metadata(portal, config, pr), api, ("input_diff", made), ("input_diff", not_made))
    result = input_diff.grade(made, data)
    assert result["pass"] is True, result["reason"]
    assert f"source: spoke '{SPOKE}' from the portal" in result["reason"]
    assert result["namedScores"] == {"expected_changes_made": 1.0, "no_collateral_changes": 1.0}
    result = input_diff.grade(not_made, data)
    assert result["pass"] is False
    assert result["namedScores"] == {"expected_changes_made": 0.0, "no_collateral_changes": 0.0}
    assert (
        'missing changes (still as in the source):\n  /tags/costCenter: expected "CC-9999", still'
        in result["reason"]
    )
    assert f'~ /tags/owner: "crm-team@contoso.com" → "{NEW_OWNER}"' in result["reason"]
    gone = {"source": "no-such-spoke", "expected_changes": {}}
    result = input_diff.grade(gone, with_snapshot(run_metadata(portal, config, pr), api, ("input_diff", gone)))
    assert result["reason"] == (
        "input_diff: spoke 'no-such-spoke' does not exist in the test repository (portal answered 404)"
    )


def test_spoke_json_valid(portal: Any, api: PortalAPI, good: tuple, bad: tuple) -> None:
    result = spoke_json_valid.grade({}, with_snapshot(run_metadata(portal, *good), api, ("spoke_json_valid", {})))
    assert result["pass"] is True, result["reason"]
    assert result["namedScores"] == {"schema_valid": 1.0}
    assert f"PR {good[1]['id']} validation succeeded" in result["reason"]
    result = spoke_json_valid.grade({}, with_snapshot(run_metadata(portal, *bad), api, ("spoke_json_valid", {})))
    assert result["pass"] is False
    assert result["namedScores"] == {"schema_valid": 0.0}
    assert result["reason"].startswith("spoke_json_valid: 2 schema error(s) ")
    assert "/subnets/0/nsgRules/0/priority: 'high' is not of type 'integer' (schema)" in result["reason"]
    assert "/tags/owner: 5 is not of type 'string' (schema)" in result["reason"]
    assert f"PR {bad[1]['id']} validation failed" in result["reason"]


def test_pull_request(portal: Any, api: PortalAPI, source: dict[str, Any]) -> None:
    config = copy.deepcopy(source)
    config["tags"]["businessUnit"] = "Marketing"
    pr = create_pull_request(portal, config, "to-abandon")
    data = run_metadata(portal, config, pr)
    active = with_snapshot(data, api, ("pull_request", {}))
    result = pull_request.grade({}, active)
    assert result["pass"] is True, result["reason"]
    assert result["reason"] == f"pull_request: the agent reported {pr['url']}, an active PR of this portal"
    assert pull_request.grade({"expect": "none"}, data)["pass"] is False
    api.abandon_pull_request(pr["id"])
    assert api.abandon_pull_request(pr["id"])["status"] == "abandoned"  # idempotent
    assert pull_request.grade({}, active)["pass"] is True  # graded on the state when the conversation ended
    result = pull_request.grade({}, with_snapshot(data, api, ("pull_request", {})))
    assert result["pass"] is False
    assert f"PR {pr['id']} is abandoned, not active" in result["reason"]
    missing = run_metadata(portal, config, pr, reply=f"See {pull_request_url(portal.url, 99999)}")
    result = pull_request.grade({}, with_snapshot(missing, api, ("pull_request", {})))
    assert "PR 99999 is reported but does not exist" in result["reason"]
