"""The run record: one type from provider to report; its metadata form round-trips."""

from __future__ import annotations

import json

import pytest

from agent_evals.record import (
    MARKER,
    AgentInfo,
    End,
    RecordError,
    RunRecord,
    SideEffect,
    Snapshot,
    ToolCall,
    Trace,
    Turn,
    Usage,
    UserInfo,
)


def _call(name: str, outcome: str, turn: int, index: int, result: object = None, server: str | None = None) -> ToolCall:
    return ToolCall.request(f"c{index}", name, json.dumps({"n": index})).with_outcome(
        outcome, result, server=server
    ).placed(turn=turn, index=index)


def _record() -> RunRecord:
    record = RunRecord(
        case_id="C01",
        agent=AgentInfo("spoke", "m", 0.2, "ab" * 32),
        user=UserInfo("simulated_user", "u"),
        turns=[
            Turn("copy a", "Shall I?", (_call("get_spoke", "ok", 1, 1, {"name": "a"}, "portal"),
                                        _call("x", "refused", 1, 2, "no"))),
            Turn("yes", "Stopped.", (_call("validate_spoke_config", "tool_error", 2, 3, "bad", "git"),), "max_tool_rounds"),
        ],
        pending=Turn("hello?", None, (_call("get_doc", "invalid_arguments", 3, 4, "not JSON"),)),
        side_effects=[SideEffect("pull_request", "7", "http://p/repos/spokes/pullrequest/7"),
                      SideEffect("branch", "release/1.2")],
        end=End.failed("system", "the portal went away"),
        trace=Trace("run-1", "C01#abc"),
        replay={"cassette": "C01.json"},
        snapshot=Snapshot("http://p", {"pull_requests": [{"id": 7, "status": "active"}], "schema": {"type": "object"}}),
    )
    record.add_usage("agent", Usage(10, 5, 15, 2, 0.01))
    record.add_usage("judge", Usage(1, 1, 2, 1, 0.001))
    return record


def test_metadata_round_trip_keeps_everything() -> None:
    record = _record()
    metadata = json.loads(json.dumps(record.to_metadata()))  # what Promptfoo stores
    back = RunRecord.from_metadata(metadata)
    assert back == record
    assert metadata[MARKER] == 3 and metadata["turns"] == 3
    assert metadata["side_effects"] == [
        {"kind": "pull_request", "id": "7", "url": "http://p/repos/spokes/pullrequest/7"},
        {"kind": "branch", "id": "release/1.2"},  # no url: the key is left out
    ]
    assert "pull_requests" not in metadata
    assert metadata["snapshot"] == {
        "read_from": "http://p", "resources": {"pull_requests": [{"id": 7, "status": "active"}], "schema": {"type": "object"}}}
    assert (metadata["conversation_end"], metadata["ended_by"], metadata["error_kind"]) == ("error", "error", "system")
    assert [c["outcome"] for c in metadata["tool_calls"]] == ["ok", "refused", "tool_error", "invalid_arguments"]
    assert [c["is_error"] for c in metadata["tool_calls"]] == [False, True, True, True]
    assert [c.get("server") for c in metadata["tool_calls"]] == ["portal", None, "git", None]
    assert "server" not in metadata["tool_calls"][1]  # written only when set: older readers see the same keys
    assert metadata["transcript"][-1] == {"role": "user", "content": "hello?", "turn": 3, "tool_calls": []}
    assert metadata["transcript"][3]["stop_reason"] == "max_tool_rounds"
    assert set(metadata["usage"]) == {"agent", "user", "judge"}


def test_the_totals_and_readers() -> None:
    record = _record()
    assert record.total_usage() == Usage(11, 6, 17, 3, 0.011)
    assert record.final_reply == "Stopped." and record.user_messages_sent == 3
    assert record.assistant_texts() == ["Shall I?", "Stopped."]
    assert [c.where() for c in record.tool_calls][:2] == ["call 1, turn 1", "call 2, turn 1"]


@pytest.mark.parametrize(
    ("end", "by"), [(End("done"), "user"), (End("gave_up"), "user"), (End("max_turns"), "limit"),
                    (End("max_tool_rounds"), "limit"), (End.failed("model", "x"), "error")],
)
def test_who_ended_the_conversation(end: End, by: str) -> None:
    assert end.by == by


def test_the_end_vocabulary_is_closed() -> None:
    with pytest.raises(ValueError, match="unknown end 'finished'"):
        End("finished")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs an error kind"):
        End("error", "flaky")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="carries no error"):
        End("done", "model", "x")


def test_the_first_error_is_kept() -> None:
    record = RunRecord()
    record.finish(End("done"))
    record.finish(End.failed("replay", "left over responses"))  # an error after the end still counts
    record.finish(End.failed("system", "later"))
    assert record.end == End.failed("replay", "left over responses")


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({}, "no provider metadata"),
        ({"output": "x"}, "not from the agent_evals provider .*keys found: output"),
        ({MARKER: 1, "tool_calls": []}, r"run record version 1 is not supported \(this kit reads versions 2, 3\); "
                                        "re-run the case, or upgrade cassettes with `npx agent-evals cassettes upgrade DIR`"),
        ({MARKER: 4, "tool_calls": []}, "run record version 4 is not supported .*cassettes upgrade DIR"),
        ({MARKER: "x", "tool_calls": []}, "run record version 'x' is not supported .*cassettes upgrade DIR"),
        ({MARKER: True, "tool_calls": []}, "run record version True is not supported"),
        ({MARKER: 2, "tool_calls": "x"}, "'tool_calls' must be a list"),
        ({MARKER: 2, "tool_calls": [{"name": "a", "outcome": "exploded"}]},
         r"tool_calls\[0\] \(a\) has outcome 'exploded', which this kit does not know"),
        ({MARKER: 2, "tool_calls": [{"name": "a", "outcome": "ok", "server": 3}]},
         r"tool_calls\[0\] \(a\) has server 3, which is not a server's name"),
        ({MARKER: 2, "conversation_end": "finished"}, "'conversation_end' is 'finished'"),
        ({MARKER: 2, "pull_requests": [{"url": "x"}]}, r"'pull_requests' entries must be \{id, url\}, got \{'url': 'x'\}"),
        ({MARKER: 3, "side_effects": [{"url": "x"}]}, r"side_effects\[0\] must be \{kind, id, url\?\}"),
        ({MARKER: 3, "side_effects": [{"kind": "pull_request", "id": 7}]}, r"side_effects\[0\] must be .*text values"),
        ({MARKER: 3, "side_effects": [{"kind": "Pull Request", "id": "7"}]}, "kind must be a lower-case word"),
        ({MARKER: 3, "side_effects": [{"kind": "branch", "id": ""}]}, "side_effects\\[0\\]: .*needs an id"),
        ({MARKER: 3, "side_effects": [{"kind": "branch", "id": "b", "url": 3}]}, r"side_effects\[0\]\.url must be text"),
        ({MARKER: 2, "snapshot": {"pull_requests": []}}, "'snapshot' of a version-2 record must be an object with a 'portal_url'"),
        ({MARKER: 2, "snapshot": {"portal_url": "p", "resources": [1]}}, "'snapshot.resources' must be an object"),
        ({MARKER: 3, "snapshot": ["p"]}, r"'snapshot' must be an object \{read_from, resources\}, got list"),
        ({MARKER: 3, "snapshot": {"portal_url": "p"}}, r"'snapshot' has key\(s\) portal_url, which record version 3 does not know"),
        ({MARKER: 3, "snapshot": {"read_from": None}}, "'snapshot.read_from' must be text, got NoneType"),
        ({MARKER: 3, "snapshot": {"resources": "x"}}, "'snapshot.resources' must be an object"),
    ],
)
def test_bad_metadata_is_named(metadata: dict, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        RunRecord.from_metadata(metadata)


def test_a_record_written_before_servers_were_named_still_reads() -> None:
    """The same record version: a call without ``server`` reads as one that names none."""
    old = {"id": "c1", "name": "get_spoke", "arguments": {"name": "a"}, "raw_arguments": '{"name": "a"}',
           "outcome": "ok", "is_error": False, "result": {"name": "a"}, "turn": 1, "index": 1, "duration_ms": 2.5}
    call = ToolCall.from_dict(old)
    assert (call.server, call.outcome, call.duration_ms) == (None, "ok", 2.5)
    assert call.to_dict() == old  # and it is written back as it was
    metadata = _record().to_metadata()
    metadata["tool_calls"][0] = {**old, "name": "get_spoke"}
    assert RunRecord.from_metadata(metadata).tool_calls[0].server is None


def test_a_request_is_not_an_error_until_executed() -> None:
    request = ToolCall.request("c1", "get_spoke", '{"name": "a"}')
    assert request.arguments == {"name": "a"} and request.outcome is None and not request.is_error
    assert ToolCall.request("c2", "x", "{bad").arguments is None
    assert ToolCall.from_dict(request.request_dict()) == request
