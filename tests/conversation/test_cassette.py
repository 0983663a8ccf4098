import json
from pathlib import Path

import pytest

from agent_evals.conversation.cassette import (
    FORMAT,
    Cassette,
    CassetteError,
    ModelCall,
    cassette_filename,
    load_cassette,
    save_cassette,
    upgrade_folder,
)
from agent_evals.llm.types import ChatResponse
from agent_evals.record import End, RunRecord, ToolCall, Turn, Usage


def _cassette() -> Cassette:
    call = ToolCall.request("c1", "get_spoke", '{"name": "a"}').with_outcome("ok", {"name": "a"}).placed(turn=1, index=1)
    record = RunRecord(case_id="C01", turns=[Turn("copy a", "Here it is.", (call,))], end=End("done"))
    calls = [
        ModelCall("agent", ChatResponse(None, (ToolCall.request("c1", "get_spoke", '{"name": "a"}'),), Usage(5, 1, 6, 1))),
        ModelCall("agent", ChatResponse("Here it is.", usage=Usage(7, 2, 9, 1))),
    ]
    return Cassette("C01", record, calls, {"case": {"id": "C01", "prompt": "x"}})


def test_filenames_per_case_variant_and_repeat() -> None:
    assert cassette_filename("C01") == "C01.json"
    assert cassette_filename("C01", variant="gpt 4o/alt", repeat=2) == "C01--gpt_4o_alt.r2.json"
    assert cassette_filename("../../etc") == "etc.json"


def test_round_trip_and_secrets_are_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORTAL_TOKEN", "super-secret-token-123")
    cassette = _cassette()
    cassette.model_calls[1] = ModelCall("agent", ChatResponse("token super-secret-token-123", usage=Usage(7, 2, 9, 1)))
    path = save_cassette(cassette, tmp_path / "C01.json")
    text = path.read_text()
    assert "super-secret-token-123" not in text and "[redacted]" in text
    back = load_cassette(path)
    assert json.loads(text)["format"] == FORMAT
    assert back.record.tool_calls == cassette.record.tool_calls and back.fingerprints == cassette.fingerprints
    assert [c.response.tool_calls for c in back.model_calls] == [c.response.tool_calls for c in cassette.model_calls]


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: "{not json", "is not valid JSON"),
        (lambda d: {**d, "format": "agent-evals/cassette@9"}, "format 'agent-evals/cassette@9', which this kit does not know"),
        (lambda d: {**d, "model_calls": [{"role": "boss", "response": {}}]}, r"model_calls\[0\] needs a role"),
        (lambda d: {k: v for k, v in d.items() if k != "case_id"}, "missing 'case_id'"),
        (lambda d: {**d, "record": {**d["record"], "tool_calls": [{"name": "a", "outcome": "vanished"}]}},
         "outcome 'vanished', which this kit does not know"),
        (lambda d: {**d, "record": {**d["record"], "agent_evals": 7}}, "run record version 7"),
    ],
    ids=["not-json", "unknown-format", "bad-role", "no-case-id", "unknown-outcome", "hand-edited-version"],
)
def test_malformed_cassettes_say_what_is_wrong(tmp_path: Path, mutate, message: str) -> None:
    with pytest.raises(CassetteError, match=message):
        load_cassette(_write(tmp_path, mutate(_cassette().to_dict())))


def test_a_truncated_cassette_is_named(tmp_path: Path) -> None:
    text = json.dumps(_cassette().to_dict())
    with pytest.raises(CassetteError, match="is not valid JSON"):
        load_cassette(_write(tmp_path, text[: len(text) // 2]))


def test_missing_cassette_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no cassette at .*C09.json"):
        load_cassette(tmp_path / "C09.json")


V1 = {
    "format": "agent-evals/cassette@1", "case_id": "C01", "recorded_at": "2026-11-29T12:00:00Z",
    "agent": {"name": "spoke", "model": "gpt", "temperature": 0.2, "instructions_sha256": "ab"},
    "user": {"kind": "user_messages"},
    "model_calls": [
        {"role": "agent", "response": {"content": None, "tool_calls": [{"id": "a", "name": "get_doc", "arguments": "{}"}],
                                       "usage": {}, "model": "gpt", "finish_reason": "tool_calls"}},
        {"role": "agent", "response": {"content": "Here.", "tool_calls": [], "usage": {}, "model": "gpt",
                                       "finish_reason": "stop"}},
    ],
    "tool_calls": [{"turn": 1, "name": "get_doc", "arguments": {}, "raw_arguments": "{}",
                    "result": "Error budgets are ...", "is_error": False}],
    "user_messages": ["what are error budgets?"],
    "outcome": {"conversation_end": "done", "turns": 1, "pull_requests": [], "error": None},
}


def test_an_old_cassette_names_its_version_and_the_upgrade_command(tmp_path: Path) -> None:
    path = tmp_path / "C01.json"
    path.write_text(json.dumps(V1))
    with pytest.raises(CassetteError, match=r"format agent-evals/cassette@1, older than this kit's .*@2: upgrade it "
                                            r"with `npx agent-evals cassettes upgrade"):
        load_cassette(path)


def test_upgrade_converts_an_old_cassette(tmp_path: Path) -> None:
    path = tmp_path / "suite" / "C01.json"
    path.parent.mkdir()
    path.write_text(json.dumps(V1))
    assert upgrade_folder(tmp_path) == [path]
    cassette = load_cassette(path)
    (call,) = cassette.record.tool_calls
    assert (call.name, call.outcome, call.index, call.turn) == ("get_doc", "ok", 1, 1)  # "Error budgets…" is ok
    assert [t.user for t in cassette.record.turns] == ["what are error budgets?"]
    assert cassette.record.end == End("done") and cassette.fingerprints == {}
    assert upgrade_folder(tmp_path) == []  # nothing left to upgrade
