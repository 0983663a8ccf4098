"""input_diff, spoke_json_valid, pull_request and the REST client against a real portal process.

PRs are created the way the agent creates them: the portal's MCP tool
``create_spoke_pull_request`` over streamable HTTP. Skipped when the portal package
is not available.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_evals.assertions import input_diff, pull_request, spoke_json_valid
from agent_evals.portal_api import PortalAPI, PortalError, PortalNotFound, pull_request_url

from ._assertion_support import call, metadata

process = pytest.importorskip("agent_evals.portal.process")
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
def portal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root: Path = tmp_path_factory.mktemp("live-portal")
    with process.PortalProcess(
        data_dir=root / "data", token=process.PortalProcess.new_token(), log_file=root / "portal.log"
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
    calls = [
        call("get_spoke", {"name": SPOKE}),
        call("create_spoke_pull_request", {"spoke_name": SPOKE, "config": config}, turn=2, result=pr),
    ]
    reply = reply if reply is not None else f"I opened {pr['url']} for you."
    return metadata(calls, replies=["Shall I?", reply], pull_requests=[pr["id"]], base_url=portal.url)


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


def test_input_diff_source_by_name(portal: Any, api: PortalAPI, good: tuple) -> None:
    config, pr = good
    data = run_metadata(portal, config, pr)
    result = input_diff.grade(
        {"source": SPOKE, "expected_changes": {"/tags/owner": NEW_OWNER}}, data, portal=api
    )
    assert result["pass"] is True, result["reason"]
    assert f"source: spoke '{SPOKE}' from the portal" in result["reason"]
    result = input_diff.grade(
        {"source": SPOKE, "expected_changes": {"/tags/costCenter": "CC-9999"}}, data, portal=api
    )
    assert result["pass"] is False
    assert (
        'missing changes (still as in the source):\n  /tags/costCenter: expected "CC-9999", still'
        in result["reason"]
    )
    assert f'~ /tags/owner: "crm-team@contoso.com" → "{NEW_OWNER}"' in result["reason"]


def test_spoke_json_valid(portal: Any, api: PortalAPI, good: tuple, bad: tuple) -> None:
    result = spoke_json_valid.grade({}, run_metadata(portal, *good), portal=api)
    assert result["pass"] is True, result["reason"]
    assert f"PR {good[1]['id']} validation succeeded" in result["reason"]
    result = spoke_json_valid.grade({}, run_metadata(portal, *bad), portal=api)
    assert result["pass"] is False
    assert result["namedScores"] == {"schema_errors": 2.0}
    assert "/subnets/0/nsgRules/0/priority: 'high' is not of type 'integer' (schema)" in result["reason"]
    assert "/tags/owner: 5 is not of type 'string' (schema)" in result["reason"]
    assert f"PR {bad[1]['id']} validation failed" in result["reason"]


def test_pull_request(portal: Any, api: PortalAPI, source: dict[str, Any]) -> None:
    config = copy.deepcopy(source)
    config["tags"]["businessUnit"] = "Marketing"
    pr = create_pull_request(portal, config, "to-abandon")
    data = run_metadata(portal, config, pr)
    result = pull_request.grade({}, data, portal=api)
    assert result["pass"] is True, result["reason"]
    assert result["reason"] == f"pull_request: the agent reported {pr['url']}, an active PR of this portal"
    assert pull_request.grade({"expect": "none"}, data)["pass"] is False
    api.abandon_pull_request(pr["id"])
    assert api.abandon_pull_request(pr["id"])["status"] == "abandoned"  # idempotent
    result = pull_request.grade({}, data, portal=api)
    assert result["pass"] is False
    assert f"PR {pr['id']} is abandoned, not active" in result["reason"]
    missing = run_metadata(portal, config, pr, reply=f"See {pull_request_url(portal.url, 99999)}")
    assert "PR 99999 is reported but does not exist" in pull_request.grade({}, missing, portal=api)["reason"]
