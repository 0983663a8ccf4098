"""The spoke pack: what it recognises, frames and checks for the portal's spokes."""

from __future__ import annotations

import json

import pytest

from agent_evals.packs import load_pack
from agent_evals.packs.spoke.created_prs import pull_request, snapshot_pull_request, snapshot_pull_requests
from agent_evals.record import RecordError, SideEffect, Snapshot, ToolCall

PR = {"id": 7, "url": "http://127.0.0.1:1/repos/spokes/pullrequest/7", "status": "active"}


def _call(name: str, result: object, outcome: str = "ok") -> ToolCall:
    return ToolCall.request("c1", name, json.dumps({})).with_outcome(outcome, result, 1.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("result", "outcome", "name", "expected"),
    [
        (PR, "ok", "create_spoke_pull_request", SideEffect("pull_request", "7", PR["url"])),
        ({"url": PR["url"]}, "ok", "create_spoke_pull_request", pull_request(7, PR["url"])),  # id from the URL
        (PR, "tool_error", "create_spoke_pull_request", None),  # a failed call made no PR
        (PR, "ok", "get_pull_request", None),  # reading a PR is not creating one
        ("Error: conflict", "ok", "create_spoke_pull_request", None),
    ],
)
def test_the_spoke_pack_finds_created_pull_requests(result, outcome, name: str, expected) -> None:
    assert load_pack("spoke").system.side_effect(_call(name, result, outcome)) == expected


def test_the_checks_read_the_portals_pull_requests_from_the_snapshots_resource() -> None:
    snapshot = Snapshot("http://127.0.0.1:1", {"pull_requests": [PR, {**PR, "id": 9}], "schema": {}})
    assert [pr["id"] for pr in snapshot_pull_requests(snapshot)] == [7, 9]
    assert snapshot_pull_request(snapshot, 9) == {**PR, "id": 9}
    assert snapshot_pull_request(snapshot, 8) is None  # the portal did not have it
    assert snapshot_pull_requests(Snapshot("http://p", {"pull_requests": []})) == []


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        ({"repository": {}}, "the end-state snapshot has no resource 'pull_requests' (the spoke pack's snapshot reads "
                             "the portal's pull requests into it; resources found: repository): was this row run with "
                             "another pack?"),
        ({}, "resources found: none)"),
        ({"pull_requests": [7]}, "metadata 'snapshot.resources.pull_requests' must be a list of pull request objects"),
        ({"pull_requests": {"id": 7}}, "'snapshot.resources.pull_requests' must be a list"),
    ],
)
def test_a_missing_or_bad_pull_requests_resource_is_named(resources: dict, message: str) -> None:
    with pytest.raises(RecordError) as caught:
        snapshot_pull_request(Snapshot("http://p", resources), 7)
    assert message in str(caught.value)


def test_the_spoke_users_framing_is_the_portals() -> None:
    from agent_evals.conversation.users import simulated_user_prompt

    prompt = simulated_user_prompt("copy a spoke", framing=load_pack("spoke").user_framing)
    assert "internal developer portal" in prompt and "link to the pull request" in prompt


@pytest.mark.parametrize(
    ("fixtures", "message"),
    [
        ([{"pull_request": {"copy": "no-such-spoke"}}], "copy 'no-such-spoke' is not a seed spoke"),
        ([{"pr": {"copy": "crm-dev-neu"}}], "fixture 1: one of {pull_request: …}, {spoke: …}"),
        ([{"pull_request": {"copy": "crm-dev-neu", "state": "completed"}}], "fixture 1 (pull_request): state"),
        ([{"pull_request": {"copy": "crm-dev-neu", "changes": {"tags": 1}}}], "JSON pointers like /tags/owner"),
        ([{"pull_request": {"copy": "crm-dev-neu", "errors": ["x"]}}], "errors need validation: failed"),
        ([{"spoke": {"key": "a", "copy": "crm-dev-neu", "name": "x-dev-neu"}},
          {"spoke": {"key": "a", "copy": "crm-dev-neu", "name": "y-dev-neu"}}], "key 'a' is used twice"),
        ({"pull_request": {}}, "vars.fixtures must be a list"),
    ],
)
def test_malformed_fixtures_are_named_before_the_run(fixtures, message: str) -> None:
    problems = load_pack("spoke").fixture_problems(fixtures)
    assert problems and message in problems[0], problems


def test_a_fixture_spoke_may_be_copied_by_a_later_fixture() -> None:
    fixtures = [{"spoke": {"copy": "crm-dev-neu", "name": "extra-dev-neu"}},
                {"pull_request": {"copy": "extra-dev-neu", "name": "extra2-dev-neu"}}]
    assert load_pack("spoke").fixture_problems(fixtures) == []
