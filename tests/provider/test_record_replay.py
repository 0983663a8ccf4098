"""Record a conversation, replay it with the models switched off, and catch cassettes that no longer fit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.testing.conversations import ConversationScript
from agent_evals.packs.spoke.scripts import SpokeCopy
from agent_evals.testing.scripted_openai import Reply, ScriptedOpenAIServer
from tests.spoke_prs import prs

from .conftest import Call, check_contract

COPY = SpokeCopy("[R01]", new_name="crm5-dev-neu", address_space="10.83.0.0/22")
USER = {"goal": "[R01] get a copy of crm-dev-neu", "facts": COPY.facts()}


def _models_off(scripted_llm: ScriptedOpenAIServer) -> None:
    scripted_llm.responder = lambda request: Reply.error(500, "no model in replay", headers={"x-should-retry": "false"})


def _calls(metadata: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(c["name"], c["arguments"]) for c in metadata["tool_calls"]]


@pytest.fixture
def recorded(converse: Call, tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """A simulated-user conversation recorded to ``tmp_path/cassettes/R01.json``."""
    folder = tmp_path / "cassettes"
    result = converse([COPY.script()], "R01", {"simulated_user": USER}, config={"record": str(folder)})
    assert "error" not in result, result.get("error")
    return result, folder / "R01.json"


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_record_then_replay_gives_the_same_tool_calls_and_a_new_pr(
    recorded: tuple[dict[str, Any], Path],
    converse: Call,
    scripted_llm: ScriptedOpenAIServer,
    portal_api: PortalAPI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, path = recorded
    cassette = json.loads(path.read_text())
    assert cassette["format"] == "agent-evals/cassette@2" and cassette["case_id"] == "R01"
    assert [c["role"] for c in cassette["model_calls"]] == ["user", "agent", "agent", "agent", "user", "agent",
                                                           "agent", "user"]
    record = cassette["record"]
    assert record["user"] == {"kind": "simulated_user", "model": "user-model"}
    assert record["agent"]["model"] == "agent-model"
    assert record["conversation_end"] == "done"
    assert prs(record) == prs(first["metadata"])
    assert "snapshot" not in record  # re-read on every replay
    assert set(cassette["fingerprints"]) == {"case", "user", "agent"}

    _models_off(scripted_llm)
    monkeypatch.setenv("AGENT_EVALS_REPLAY_DIR", str(path.parent))  # replay switched on by the environment
    second = converse([], "R01", {"simulated_user": USER})

    assert "error" not in second, second.get("error")
    check_contract(second["metadata"])
    assert _calls(second["metadata"]) == _calls(first["metadata"])
    assert second["metadata"]["transcript"][0] == first["metadata"]["transcript"][0]
    [old], [new] = prs(first["metadata"]), prs(second["metadata"])
    assert new["id"] != old["id"]
    assert new["url"] in second["metadata"]["final_reply"] and old["url"] not in second["metadata"]["final_reply"]
    assert portal_api.get_pull_request(new["id"])["test_id"] == second["metadata"]["trace"]["test_id"]
    assert second["metadata"]["usage"] == first["metadata"]["usage"]  # what the recording cost, for reference
    assert second["metadata"]["replay"] == {"cassette": path.name}
    assert first["tokenUsage"]["total"] > 0 and second["tokenUsage"]["total"] == 0  # a replay spends nothing
    assert second["cost"] == 0


def test_replay_of_fixed_messages_and_a_changed_message_stops_before_the_agent_acts(
    converse: Call, scripted_llm: ScriptedOpenAIServer, portal_api: PortalAPI, tmp_path: Path
) -> None:
    copy = SpokeCopy("[R02]", new_name="crm6-dev-neu", address_space="10.84.0.0/22")
    folder = tmp_path / "fixed"
    first = converse([copy.script()], "R02", {"user_messages": copy.fixed_messages()}, config={"record": str(folder)})
    assert "error" not in first
    _models_off(scripted_llm)

    same = converse([], "R02", {"user_messages": copy.fixed_messages()}, config={"replay": str(folder)})
    assert "error" not in same, same.get("error")
    assert _calls(same["metadata"]) == _calls(first["metadata"])

    changed = [copy.request, "Yes, but call it crm7-dev-neu."]
    stale = converse([], "R02", {"user_messages": changed}, config={"replay": str(folder)})
    assert stale["error"].startswith("[replay] cassette R02.json is stale: the fixed user messages changed.")
    assert stale["metadata"]["tool_calls"] == []  # found before anything ran

    result = converse([], "R02", {"user_messages": changed}, config={"replay": str(folder), "allow_stale": True})
    assert result["error"] == (
        "[replay] cassette R02.json no longer fits the run: turn 2: the user said "
        "'Yes, but call it crm7-dev-neu.', the cassette recorded \"Yes, that's right, please create it.\""
    )
    metadata = result["metadata"]
    check_contract(metadata)
    assert metadata["conversation_end"] == "error" and result["error"] == f"[replay] {metadata['error']}"
    assert metadata["replay"]["stale"] == ["the fixed user messages changed"]
    assert prs(metadata) == []  # the recorded create call did not run
    assert portal_api.list_pull_requests(test_id=metadata["trace"]["test_id"]) == []
    assert "create_spoke_pull_request" not in [c["name"] for c in metadata["tool_calls"]]


def _change_argument(cassette: dict[str, Any], key: str, value: Any) -> None:
    """The agent's first recorded response asks for its first tool with one argument changed."""
    call = cassette["model_calls"][1]["response"]["tool_calls"][0]
    call["arguments"] = json.dumps({**json.loads(call["arguments"]), key: value})


def _replay(converse: Call, folder: Path, vars_: dict[str, Any] | None = None) -> dict[str, Any]:
    return converse([], "R01", vars_ or {"simulated_user": USER}, config={"replay": str(folder)})


@pytest.mark.parametrize(
    ("change", "divergence", "created"),
    [
        pytest.param(
            lambda c: c["model_calls"].pop(),
            "the run asked the user model for response 8, but the cassette has only 7",
            1,
            id="a model call removed",
        ),
        pytest.param(
            lambda c: c["model_calls"].pop(1),
            "tool call 1: the run calls validate_spoke_config, the cassette recorded get_spoke",
            0,
            id="an agent call removed mid-way",
        ),
        pytest.param(
            lambda c: c["record"]["tool_calls"][1]["result"].update(valid=False),
            "turn 1, tool call 2 (validate_spoke_config): result /valid = true, the cassette recorded false",
            0,
            id="a validation verdict changed",
        ),
        pytest.param(
            lambda c: c["record"]["tool_calls"].pop(),
            "tool call 3 (create_spoke_pull_request): the cassette recorded only 2 tool calls",
            0,
            id="a tool call removed",
        ),
        pytest.param(
            lambda c: c["model_calls"].append(c["model_calls"][-1]),
            "the run ended after 2 user message(s) (done), but the cassette has 1 more model response(s), "
            "next from the user model",
            1,
            id="a model call left over",
        ),
        pytest.param(
            lambda c: c["model_calls"][1]["response"]["tool_calls"][0].update(name="delete_everything"),
            "tool call 1: the run calls delete_everything, the cassette recorded get_spoke",
            0,
            id="a response calling another tool than recorded",
        ),
        pytest.param(
            lambda c: _change_argument(c, "name", "crm-dev-weu"),
            'turn 1, tool call 1 (get_spoke): the run asks for argument /name = "crm-dev-weu", the cassette '
            'recorded "crm-dev-neu"',
            0,
            id="a cassette with one changed argument",
        ),
        pytest.param(
            lambda c: c["fingerprints"]["user"].update(kind="user_messages"),
            "is stale: the user changed from user_messages to simulated_user",
            0,
            id="another kind of user",
        ),
        pytest.param(
            lambda c: c["fingerprints"]["agent"]["tools"]["get_spoke"].update(parameters="0" * 16),
            "is stale: tool get_spoke's parameters changed",
            0,
            id="a tool's parameters changed",
        ),
        pytest.param(
            lambda c: c["record"]["tool_calls"][0].update(outcome="tool_error"),
            "turn 1, tool call 1 (get_spoke) failed when recorded, now succeeded",
            0,
            id="a tool outcome changed",
        ),
    ],
)
def test_a_cassette_that_no_longer_fits_names_the_first_divergence(
    recorded: tuple[dict[str, Any], Path],
    converse: Call,
    scripted_llm: ScriptedOpenAIServer,
    change: Any,
    divergence: str,
    created: int,
) -> None:
    _, path = recorded
    _edit(path, change)
    _models_off(scripted_llm)
    result = _replay(converse, path.parent)

    assert result["error"].startswith("[replay] cassette R01.json ")
    assert divergence in result["error"]
    check_contract(result["metadata"])
    assert result["metadata"]["conversation_end"] == "error"
    # stopped before the recorded create call ran, or listed for cleanup when it had run
    assert len(prs(result["metadata"])) == created


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        (json.dumps({"format": "agent-evals/cassette@2", "case_id": "R01", "record": {"agent_evals": 2},
                     "model_calls": [{"role": "boss", "response": {}}]}), "model_calls[0] needs a role"),
        (json.dumps({"case_id": "R01", "format": "agent-evals/cassette@9"}), "format"),
        (json.dumps({"case_id": "R01", "format": "agent-evals/cassette@1"}), "agent-evals cassettes upgrade"),
    ],
)
def test_a_malformed_or_missing_cassette_is_an_error(converse: Call, tmp_path: Path, content: str, message: str) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    missing = _replay(converse, folder)
    assert missing["error"].startswith(f"[replay] no cassette at {folder / 'R01.json'}")
    (folder / "R01.json").write_text(content)
    result = _replay(converse, folder)
    assert "R01.json" in result["error"] and message in result["error"]
    assert result["metadata"]["conversation_end"] == "error" and prs(result["metadata"]) == []


def test_secrets_are_not_in_output_metadata_or_cassettes(
    converse: Call, scripted_llm: ScriptedOpenAIServer, kit_env: dict[str, str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api_key = "sk-test-4f9a2c7e1b"
    monkeypatch.setenv("OPENAI_API_KEY", api_key)
    portal_token = kit_env["PORTAL_TOKEN"]
    copy = SpokeCopy("[R03]", new_name="crm8-dev-neu", address_space="10.85.0.0/22")
    leaky = [*copy.agent_steps()[:4], Reply.text(f"Done. (debug: token {portal_token}, key {api_key})")]
    folder = tmp_path / "secret"
    script = ConversationScript(copy.key, leaky, [copy.request, f"Yes. My token is {portal_token}", "[DONE]"])
    result = converse([script], "R03", {"simulated_user": {"goal": "[R03] copy"}}, config={"record": str(folder)})

    assert "error" not in result, result.get("error")
    assert scripted_llm.requests[-1].headers["authorization"] == f"Bearer {api_key}"  # the key was in use
    assert "[redacted]" in result["metadata"]["final_reply"] and "[redacted]" in result["output"]
    written = json.dumps(result) + (folder / "R03.json").read_text()
    for secret in (api_key, portal_token):
        assert secret not in written


def test_repeats_record_apart_and_replay_falls_back_to_the_shared_cassette(
    converse: Call, scripted_llm: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    copy = SpokeCopy("[R04]", new_name="crm9-dev-neu", address_space="10.91.0.0/22")
    folder = tmp_path / "repeats"
    fixed = {"user_messages": copy.fixed_messages()}
    for repeat in (0, 1):
        converse([copy.script()], "R04", fixed, config={"record": str(folder), "variant": "alt"}, repeat=repeat)
    assert sorted(p.name for p in folder.iterdir()) == ["R04--alt.json", "R04--alt.r1.json"]
    _models_off(scripted_llm)
    result = converse([], "R04", fixed, config={"replay": str(folder), "variant": "alt"}, repeat=3)
    assert "error" not in result, result.get("error")
    assert result["metadata"]["trace"]["test_id"].startswith("R04.r3--alt#")
