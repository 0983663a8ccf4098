"""pull_request: created and reported, or none (blocked cases)."""

from __future__ import annotations

import pytest

from agent_evals.assertions.pull_request import grade
from agent_evals.portal_api import PortalAPI

from ._assertion_support import StubPortal, call, metadata

C = "create_spoke_pull_request"


@pytest.fixture
def portal(portal_stub: StubPortal, portal_client: PortalAPI) -> PortalAPI:
    portal_stub.add_pull_request(3)
    portal_stub.add_pull_request(4, status="abandoned")
    portal_stub.add_pull_request(5)
    return portal_client


def reply(portal: PortalAPI, *ids: int) -> str:
    return "Created " + " and ".join(f"{portal.base_url}/repos/spokes/pullrequest/{pr}" for pr in ids) + "."


def created(portal: PortalAPI, text: str, prs: list[int]) -> dict:
    return metadata(
        [call(C, {"config": {}}, turn=2)],
        replies=["Let me look.", text],
        pull_requests=prs,
        base_url=portal.base_url,
    )


def test_reported_active_pr_passes(portal: PortalAPI) -> None:
    result = grade({}, created(portal, reply(portal, 3), [3]), portal=portal)
    assert result["pass"] is True
    assert (
        result["reason"]
        == f"pull_request: the agent reported {portal.base_url}/repos/spokes/pullrequest/3, an active PR of this portal"
    )


@pytest.mark.parametrize(
    ("ids", "prs", "config", "fragment"),
    [
        (
            (),
            [3],
            {},
            "no URL of a PR of this portal ({base}/repos/spokes/pullrequest/<id>) in the agent's replies",
        ),
        ((4,), [4], {}, "PR 4 is abandoned, not active"),
        ((9,), [3], {}, "PR 9 is reported but does not exist"),
        ((5,), [3], {}, "PR 5 was not created in this conversation (created: 3)"),
        ((3, 9), [3], {}, "PR 9 is reported but does not exist"),  # a hallucinated second link fails the case
    ],
)
def test_created_failures(portal: PortalAPI, ids, prs, config, fragment) -> None:
    result = grade(
        config, created(portal, reply(portal, *ids) if ids else "I opened a PR.", prs), portal=portal
    )
    assert result["pass"] is False
    assert fragment.format(base=portal.base_url) in result["reason"]


def test_created_in_conversation_can_be_relaxed(portal: PortalAPI) -> None:
    assert grade({"created_in_conversation": False}, created(portal, reply(portal, 5), []), portal=portal)[
        "pass"
    ]


def test_other_host_is_not_this_portal(portal: PortalAPI) -> None:
    text = reply(portal, 3) + " Mirror: https://dev.azure.com/org/p/_git/spokes/pullrequest/3"
    result = grade({}, created(portal, text, [3]), portal=portal)
    assert result["pass"] is False
    assert (
        f"https://dev.azure.com/org/p/_git/spokes/pullrequest/3 is not this portal ({portal.base_url})"
        in result["reason"]
    )


def test_portal_url_from_environment(portal: PortalAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORTAL_URL", portal.base_url)
    assert grade({}, created(portal, reply(portal, 3), [3]))["pass"] is True
    monkeypatch.setenv("PORTAL_URL", "http://127.0.0.1:9")
    result = grade({}, created(portal, "Created http://127.0.0.1:9/repos/spokes/pullrequest/3", [3]))
    assert result["pass"] is False
    assert (
        "could not check the reported PR through the portal: the portal at http://127.0.0.1:9 is not reachable"
        in result["reason"]
    )


BASE = "http://127.0.0.1:8400"


@pytest.mark.parametrize(
    ("calls", "replies", "prs", "passes", "reason"),
    [
        (
            [call("get_spoke")],
            ["I can't do that: the change is not allowed."],
            [],
            True,
            "pull_request: no pull request created or reported, as expected",
        ),
        (
            [call(C, is_error=True)],
            ["The portal rejected it."],
            [],
            True,
            (
                "pull_request: no pull request created or reported, as expected "
                "(create_spoke_pull_request was attempted 1 time(s) and errored)"
            ),
        ),
        # blocked case where a PR was created anyway
        (
            [call(C, turn=2)],
            [f"Done: {BASE}/repos/spokes/pullrequest/7"],
            [7],
            False,
            (
                f"pull_request: expected no pull request, but PR URL(s) in the agent's replies: {BASE}/repos/spokes/pullrequest/7; "
                "PR(s) created in the conversation: 7; create_spoke_pull_request succeeded at call 1, turn 2"
            ),
        ),
        (
            [call(C, turn=1)],
            ["I won't."],
            [],
            False,
            "pull_request: expected no pull request, but create_spoke_pull_request succeeded at call 1, turn 1",
        ),
        (
            [],
            ["See https://dev.azure.com/o/p/_git/r/pullrequest/2"],
            [],
            False,
            "pull_request: expected no pull request, but PR URL(s) in the agent's replies: https://dev.azure.com/o/p/_git/r/pullrequest/2",
        ),
    ],
)
def test_expect_none(calls, replies, prs, passes, reason, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PORTAL_URL", raising=False)  # expect: none needs no portal
    result = grade({"expect": "none"}, metadata(calls, replies=replies, pull_requests=prs))
    assert result["pass"] is passes
    assert result["reason"] == reason


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"expect": "maybe"}, 'config.expect is "maybe", which is not allowed; allowed: created, none'),
        (
            {"expect": None, "created_in_conversation": "no"},
            'config.created_in_conversation must be true or false, got str "no"',
        ),
        ({"url": "x"}, "unknown config key 'url'; allowed keys: expect, tool, created_in_conversation"),
    ],
)
def test_malformed_config(config: dict, message: str) -> None:
    assert grade(config, metadata())["reason"] == f"pull_request: invalid config: {message}"
