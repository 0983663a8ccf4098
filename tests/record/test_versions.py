"""The record's versions: a version-2 record reads as its upgrade; other versions are refused."""

from __future__ import annotations

import copy
import json

import pytest

from agent_evals.live.sources import SourceError
from agent_evals.live.store import StoreUnavailable
from agent_evals.packs.spoke.portal.api import PortalUnavailable
from agent_evals.record import ERROR_KINDS, MARKER, End, RecordError, RunRecord, SideEffect, Snapshot, upgrade_record
from agent_evals.record.versions import unsupported
from agent_evals.system import SystemFailure, SystemSetupError

V2 = {
    MARKER: 2, "case_id": "C01", "agent": {"name": "spoke", "model": "m"}, "user": {"kind": "simulated_user"},
    "turns": 1, "transcript": [{"role": "user", "content": "copy a", "turn": 1, "tool_calls": []},
                               {"role": "assistant", "content": "Done: http://p/repos/spokes/pullrequest/7",
                                "turn": 1, "tool_calls": []}],
    "tool_calls": [],
    "pull_requests": [{"id": 7, "url": "http://p/repos/spokes/pullrequest/7"}, {"id": 9, "url": ""}],
    "conversation_end": "error", "ended_by": "error", "error_kind": "portal", "error": "[portal] portal at http://p unreachable",
    "final_reply": "Done: http://p/repos/spokes/pullrequest/7", "usage": {},
    "snapshot": {"portal_url": "http://p", "pull_requests": [{"id": 7, "status": "active", "validation_status": "succeeded"}],
                 "resources": {"schema": {"schema": {"type": "object"}}, "spoke/a": None}},
}
V3_SNAPSHOT = {"read_from": "http://p", "resources": {
    "schema": {"schema": {"type": "object"}}, "spoke/a": None,
    "pull_requests": [{"id": 7, "status": "active", "validation_status": "succeeded"}]}}


def test_a_version_2_record_upgrades_to_side_effects_and_the_system_kind() -> None:
    before = copy.deepcopy(V2)
    new = upgrade_record(V2)
    assert V2 == before  # pure: the old form is not changed
    assert new[MARKER] == 3 and "pull_requests" not in new
    assert new["side_effects"] == [
        {"kind": "pull_request", "id": "7", "url": "http://p/repos/spokes/pullrequest/7"},
        {"kind": "pull_request", "id": "9"},
    ]
    assert new["error_kind"] == "system"
    assert new["error"] == V2["error"]  # the text is what the person saw: kept
    assert new["snapshot"] == V3_SNAPSHOT  # the portal's pull requests are the spoke pack's resource now
    assert {k: v for k, v in new.items() if k not in ("side_effects", "error_kind", "snapshot", MARKER)} == {
        k: v for k, v in V2.items() if k not in ("pull_requests", "error_kind", "snapshot", MARKER)}


def test_a_version_2_read_in_memory_equals_its_upgrade() -> None:
    old = RunRecord.from_metadata(V2)
    assert old == RunRecord.from_metadata(upgrade_record(V2))
    assert old.side_effects == [SideEffect("pull_request", "7", "http://p/repos/spokes/pullrequest/7"),
                                SideEffect("pull_request", "9")]
    assert old.end is not None and old.end.error_kind == "system"
    assert old.snapshot == Snapshot("http://p", V3_SNAPSHOT["resources"])
    written = json.loads(json.dumps(old.to_metadata()))  # written back: version 3
    assert written[MARKER] == 3 and written["error_kind"] == "system" and "pull_requests" not in written
    assert written["snapshot"] == V3_SNAPSHOT
    assert RunRecord.from_metadata(written) == old


@pytest.mark.parametrize(
    ("snapshot", "expected"),
    [
        ({"portal_url": "http://p", "pull_requests": [], "resources": {}},  # no PR: the resource is there, empty
         {"read_from": "http://p", "resources": {"pull_requests": []}}),
        ({"portal_url": "file:///tmp/copy", "pull_requests": None, "resources": {"repository": {}}},
         {"read_from": "file:///tmp/copy", "resources": {"repository": {}, "pull_requests": []}}),
        ({"portal_url": "http://p"}, {"read_from": "http://p", "resources": {}}),
        ({"portal_url": "http://p", "resources": None, "extra": 1},  # kept: the reader names it
         {"read_from": "http://p", "resources": {}, "extra": 1}),
    ],
)
def test_a_version_2_snapshot_becomes_read_from_and_resources(snapshot: dict, expected: dict) -> None:
    assert upgrade_record({MARKER: 2, "snapshot": snapshot})["snapshot"] == expected


@pytest.mark.parametrize(
    ("snapshot", "message"),
    [
        ({"pull_requests": []}, "metadata 'snapshot' of a version-2 record must be an object with a 'portal_url'"),
        (["http://p"], "metadata 'snapshot' of a version-2 record must be an object with a 'portal_url'"),
        ({"portal_url": "http://p", "resources": [1]}, "metadata 'snapshot.resources' must be an object"),
        ({"portal_url": "http://p", "pull_requests": [], "resources": {"pull_requests": []}},
         "metadata 'snapshot' of a version-2 record has both 'pull_requests' and a resource 'pull_requests'; "
         "version 3 keeps the pull requests in that resource"),
    ],
)
def test_a_version_2_snapshot_that_cannot_be_upgraded_is_named(snapshot: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        upgrade_record({MARKER: 2, "snapshot": snapshot})
    assert str(caught.value) == message


def test_other_error_kinds_and_a_record_without_pull_requests_upgrade_as_they_are() -> None:
    new = upgrade_record({MARKER: 2, "conversation_end": "error", "error_kind": "model", "error": "x"})
    assert new == {MARKER: 3, "conversation_end": "error", "error_kind": "model", "error": "x"}


def test_a_version_3_record_is_copied_unchanged() -> None:
    v3 = upgrade_record(V2)
    again = upgrade_record(v3)
    assert again == v3 and again is not v3


@pytest.mark.parametrize("version", [1, 4, "x", None, True, "2"])
def test_any_other_version_is_refused_with_the_hint(version: object) -> None:
    with pytest.raises(ValueError, match="cassettes upgrade DIR") as caught:
        upgrade_record({MARKER: version})
    assert str(caught.value) == unsupported(version)
    assert "\n" not in str(caught.value)
    with pytest.raises(RecordError, match=f"run record version {version!r} is not supported"):
        RunRecord.from_metadata({MARKER: version, "case_id": "C01"})


def test_version_3_writes_no_portal_error_kind() -> None:
    assert "portal" not in ERROR_KINDS and "system" in ERROR_KINDS
    with pytest.raises(ValueError, match="needs an error kind"):
        End.failed("portal", "the portal went away")  # type: ignore[arg-type]
    for failure in (SystemFailure, SystemSetupError, PortalUnavailable, StoreUnavailable, SourceError):
        assert failure("down").kind == "system", failure
    record = RunRecord(end=End.failed("system", "the portal at http://p is not reachable"))
    assert record.to_metadata()["error_kind"] == "system"


def test_a_version_3_record_comes_back_as_an_independent_copy() -> None:
    """Nothing of the copy is the original's, whatever it holds (marshal's round trip for JSON-shaped
    data, deepcopy for what marshal does not know)."""
    from collections import OrderedDict

    record = upgrade_record(V2)
    for original in (record, {**record, "extra": OrderedDict(a=[1])}):
        before = copy.deepcopy(original)
        out = upgrade_record(original)
        assert out == original
        out["snapshot"]["resources"]["pull_requests"][0]["status"] = "abandoned"
        out["transcript"].append({})
        out.get("extra", {}).setdefault("b", 2)
        assert original == before
