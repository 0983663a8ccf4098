import json
from pathlib import Path

import pytest

from agent_evals.conversation.cassette import (
    Cassette,
    CassetteError,
    ModelCall,
    RecordedResponse,
    cassette_filename,
    load_cassette,
    save_cassette,
)


def test_filenames_per_case_variant_and_repeat() -> None:
    assert cassette_filename("C01") == "C01.json"
    assert cassette_filename("C01", variant="gpt 4o/alt", repeat=2) == "C01--gpt_4o_alt.r2.json"
    assert cassette_filename("../../etc") == "etc.json"


def test_round_trip_and_secrets_are_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORTAL_TOKEN", "super-secret-token-123")
    cassette = Cassette(
        case_id="C01",
        model_calls=[ModelCall(role="agent", response=RecordedResponse(content="token super-secret-token-123"))],
    )
    path = save_cassette(cassette, tmp_path / "C01.json")
    text = path.read_text()
    assert "super-secret-token-123" not in text and "[redacted]" in text
    assert load_cassette(path).model_calls[0].role == "agent"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        (json.dumps({"case_id": "C01", "model_calls": [{"role": "judge", "response": {}}]}), "model_calls.0.role"),
        (json.dumps({"model_calls": []}), "case_id"),
        (json.dumps({"case_id": "C01", "surprise": 1}), "surprise"),
    ],
)
def test_malformed_cassettes_say_what_is_wrong(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(CassetteError, match=message):
        load_cassette(path)


def test_missing_cassette_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no cassette at .*C09.json"):
        load_cassette(tmp_path / "C09.json")
