"""pull_request: created and reported (graded on the end-state snapshot), or none (blocked cases)."""

from __future__ import annotations

import pytest

from agent_evals.packs.spoke.checks.pull_request import grade

from ._assertion_support import BASE, call, metadata, portal_pull_request, snapshot, version_2

C = "create_spoke_pull_request"
# the portal's PRs when the conversation ended: 3 and 5 active, 4 abandoned (no PR 9)
PORTAL = snapshot(
    BASE,
    pull_requests=[portal_pull_request(3), portal_pull_request(4, status="abandoned"), portal_pull_request(5)],
)


def reply(*ids: int, base: str = BASE) -> str:
    return "Created " + " and ".join(f"{base}/repos/spokes/pullrequest/{pr}" for pr in ids) + "."


def created(text: str, prs: list[int], state: dict | None = PORTAL) -> dict:
    return metadata(
        [call(C, {"config": {}}, turn=2)],
        replies=["Let me look.", text],
        pull_requests=prs,
        snapshot=state,
    )


def test_reported_active_pr_passes() -> None:
    result = grade({}, created(reply(3), [3]))
    assert result["pass"] is True
    assert (
        result["reason"]
        == f"pull_request: the agent reported {BASE}/repos/spokes/pullrequest/3, an active PR of this portal"
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
        ((9,), [3], {}, "PR 9 is reported but does not exist"),  # not in the snapshot
        ((5,), [3], {}, "PR 5 was not created in this conversation (created: 3)"),
        ((3, 9), [3], {}, "PR 9 is reported but does not exist"),  # a hallucinated second link fails the case
    ],
)
def test_created_failures(ids, prs, config, fragment) -> None:
    result = grade(config, created(reply(*ids) if ids else "I opened a PR.", prs))
    assert result["pass"] is False
    assert fragment.format(base=BASE) in result["reason"]
    assert result["reason"].endswith(f"(PRs created in the conversation: {', '.join(map(str, prs))})")


def test_created_in_conversation_can_be_relaxed() -> None:
    assert grade({"created_in_conversation": False}, created(reply(5), []))["pass"] is True
    # relaxed, a PR that is not in the snapshot still does not exist
    result = grade({"created_in_conversation": False}, created(reply(9), []))
    assert result["pass"] is False
    assert "PR 9 is reported but does not exist" in result["reason"]


def test_other_host_is_not_this_portal() -> None:
    text = reply(3) + " Mirror: https://dev.azure.com/org/p/_git/spokes/pullrequest/3"
    result = grade({}, created(text, [3]))
    assert result["pass"] is False
    assert f"https://dev.azure.com/org/p/_git/spokes/pullrequest/3 is not this portal ({BASE})" in result["reason"]


def test_this_portal_is_the_snapshot_portal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The snapshot names the portal; PORTAL_URL is not read (and no request is made) while grading."""
    monkeypatch.setenv("PORTAL_URL", "http://127.0.0.1:9")
    assert grade({}, created(reply(3), [3]))["pass"] is True
    result = grade({}, created(reply(3, base="http://127.0.0.1:9"), [3]))
    assert result["pass"] is False
    assert f"http://127.0.0.1:9/repos/spokes/pullrequest/3 is not this portal ({BASE})" in result["reason"]
    other = snapshot("http://portal.test/sub", pull_requests=[portal_pull_request(3, "http://portal.test/sub")])
    assert grade({}, created(reply(3, base="http://portal.test/sub"), [3], other))["pass"] is True


def test_expect_created_needs_a_snapshot() -> None:
    result = grade({}, created(reply(3), [3], state=None))
    assert result == {
        "pass": False,
        "score": 0.0,
        "reason": "pull_request: the metadata has no end-state snapshot ('snapshot'): the provider takes one when "
        "the conversation ends; this row comes from another provider or an older kit",
    }


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
        (
            [call(C, outcome="refused"), call(C, None, raw="{bad", outcome="invalid_arguments")],
            ["I may not open pull requests."],
            [],
            True,
            (
                "pull_request: no pull request created or reported, as expected "
                "(create_spoke_pull_request was attempted 2 time(s) and errored)"
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
def test_expect_none(calls, replies, prs, passes, reason) -> None:
    result = grade({"expect": "none"}, metadata(calls, replies=replies, pull_requests=prs))  # needs no snapshot
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


def test_a_version_2_record_is_graded_as_its_upgrade() -> None:
    """Its pull requests are still the ones the conversation created: a check fails when it must."""
    made = version_2(metadata([call(C, turn=1)], replies=["I won't."], pull_requests=[7], snapshot=PORTAL))
    assert made["snapshot"]["pull_requests"] and "read_from" not in made["snapshot"]  # the old form
    result = grade({"expect": "none"}, made)
    assert result["pass"] is False and "PR(s) created in the conversation: 7" in result["reason"]
    other = version_2(created(reply(3), [5]))  # reported 3, created 5
    result = grade({}, other)
    assert result["pass"] is False and "not created in this conversation" in result["reason"], result["reason"]
    assert grade({}, version_2(created(reply(3), [3])))["pass"] is True


@pytest.mark.parametrize(
    ("text", "prs", "state"),
    [
        (reply(3), [3], PORTAL),  # passes
        (reply(4), [4], PORTAL),  # abandoned
        (reply(9), [3], PORTAL),  # not on the portal
        (reply(3, base="http://elsewhere.test"), [3], PORTAL),  # another host
        (reply(3), [3], snapshot(pull_requests=[])),  # the portal had none of them
        (reply(3), [3], snapshot("http://portal.test/sub", pull_requests=[portal_pull_request(3)])),
    ],
)
def test_a_version_2_row_is_graded_as_before(text: str, prs: list[int], state: dict) -> None:
    """Verdict and reason: the end state of an upgraded row is the one the portal gave."""
    row = created(text, prs, state)
    assert grade({}, version_2(row)) == grade({}, row)


def test_a_snapshot_without_the_portals_pull_requests_is_named() -> None:
    state = {"read_from": BASE, "resources": {"repository": {}}}  # another pack's end state
    result = grade({}, created(reply(3), [3], state))
    assert result == {"pass": False, "score": 0.0, "reason": (
        "pull_request: the end-state snapshot has no resource 'pull_requests' (the spoke pack's snapshot reads the "
        "portal's pull requests into it; resources found: repository): was this row run with another pack?")}
