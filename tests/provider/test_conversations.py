"""The provider holding real conversations: the live portal, the scripted models as agent and user."""

from __future__ import annotations

import json

import pytest

from agent_evals.agent import mcp_session
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.testing.conversations import CONFIRM
from agent_evals.packs.spoke.scripts import SpokeCopy
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from tests.spoke_prs import prs

from .conftest import Call, check_contract, tool_names

COPY_TOOLS = ["get_spoke", "validate_spoke_config", "create_spoke_pull_request"]
RULE_USER = "agent_evals.conversation.rule_users:ConfirmingUser"


def _created(metadata: dict, portal_api: PortalAPI) -> dict:
    [pr] = prs(metadata)
    return portal_api.get_pull_request(pr["id"])


def test_fixed_messages_copy_a_spoke_and_the_pr_is_traceable(converse: Call, portal_api: PortalAPI) -> None:
    copy = SpokeCopy("[P01]", new_name="crm2-dev-neu")
    result = converse([copy.script()], "P01", {"user_messages": copy.fixed_messages()}, eval_id="eval-p01")

    assert "error" not in result, result.get("error")
    metadata = result["metadata"]
    check_contract(metadata)
    assert metadata["conversation_end"] == "done" and metadata["turns"] == 2
    assert tool_names(metadata) == COPY_TOOLS
    assert [c["turn"] for c in metadata["tool_calls"]] == [1, 1, 2]
    assert metadata["tool_calls"][1]["result"]["valid"] is True
    pr = _created(metadata, portal_api)
    assert pr["url"] in metadata["final_reply"] and metadata["final_reply"].startswith("Done:")
    assert pr["spoke_name"] == "crm2-dev-neu" and pr["validation_status"] == "succeeded"
    # traceability: the MCP client's headers are on the PR
    assert pr["eval_id"] == "eval-p01"
    assert pr["test_id"] == metadata["trace"]["test_id"] and pr["test_id"].startswith("P01#")
    assert pr["created_by"] == "agent-evals:spoke"
    assert metadata["case_id"] == "P01"
    assert metadata["agent"]["name"] == "spoke" and metadata["agent"]["model"] == "agent-model"
    assert len(metadata["agent"]["instructions_sha256"]) == 64
    # the output: User / Assistant turns, tool calls marked, the final reply last
    output = result["output"]
    assert output.startswith(f"User: {copy.request}\n  [tool] get_spoke(")
    assert f"User: {CONFIRM}\n  [tool] create_spoke_pull_request(" in output
    assert output.index("Assistant: Done:") > output.index("create_spoke_pull_request")
    assert output.endswith("[conversation ended: done, by the user]")
    # usage: the agent made 5 model calls, no user model was used
    assert metadata["usage"]["agent"]["calls"] == 5 and metadata["usage"]["user"]["calls"] == 0
    assert result["tokenUsage"]["numRequests"] == 5 and result["tokenUsage"]["total"] > 0
    assert result["cost"] == 0.0


def test_simulated_user_ends_done(converse: Call, scripted_llm: ScriptedOpenAIServer, portal_api: PortalAPI) -> None:
    copy = SpokeCopy("[P02]", new_name="crm3-dev-neu", address_space="10.81.0.0/22")
    user = {"goal": "[P02] get a copy of crm-dev-neu", "persona": "terse", "facts": copy.facts()}
    result = converse([copy.script()], "P02", {"simulated_user": user})

    assert "error" not in result, result.get("error")
    metadata = result["metadata"]
    check_contract(metadata)
    assert metadata["conversation_end"] == "done" and metadata["turns"] == 2
    assert tool_names(metadata) == COPY_TOOLS
    assert _created(metadata, portal_api)["url"] in metadata["final_reply"]
    # the user model was asked three times (request, confirm, [DONE]) and its usage is apart
    assert metadata["usage"]["user"]["calls"] == 3 and metadata["usage"]["agent"]["calls"] == 5
    assert result["tokenUsage"]["numRequests"] == 8
    user_requests = [r for r in scripted_llm.requests if r.model == "user-model" and "[P02]" in r.messages[0]["content"]]
    assert len(user_requests) == 3
    assert "Never correct the assistant" in user_requests[0].messages[0]["content"]
    assert "- new name: crm3-dev-neu" in user_requests[0].messages[0]["content"]
    assert user_requests[0].tools is None  # the user is offered no tools
    # roles are flipped for the user model: the agent's replies are its "user" messages
    assert user_requests[2].messages[-1]["content"] == metadata["final_reply"]


def test_simulated_user_gives_up(converse: Call) -> None:
    script = SpokeCopy("[P03]").script(user=["[P03] copy crm-dev-neu please", "I don't know that. [GIVE UP]"])
    refusal = ["Which name and address space should the copy get?"]
    script = type(script)(script.key, refusal, script.user)
    result = converse([script], "P03", {"simulated_user": {"goal": "[P03] copy crm-dev-neu"}})

    assert "error" not in result
    metadata = result["metadata"]
    check_contract(metadata)
    assert metadata["conversation_end"] == "gave_up" and metadata["turns"] == 1
    assert metadata["tool_calls"] == [] and prs(metadata) == []
    assert result["output"].endswith("[conversation ended: gave_up, by the user]")


def test_max_turns_stops_the_conversation(converse: Call) -> None:
    chatty = ["[P04] copy crm-dev-neu", "hm?", "and?", "still there?"]
    script = SpokeCopy("[P04]").script(user=chatty)
    script = type(script)(script.key, ["Could you say more?"] * 3, script.user)
    result = converse([script], "P04", {"simulated_user": {"goal": "[P04] copy"}, "max_turns": 2})

    assert "error" not in result
    metadata = result["metadata"]
    check_contract(metadata)
    assert metadata["conversation_end"] == "max_turns" and metadata["turns"] == 2
    assert [e["content"] for e in metadata["transcript"] if e["role"] == "user"] == chatty[:2]
    # the user model is asked once more, to see whether it would have stopped by itself
    assert metadata["usage"]["user"]["calls"] == 3 and metadata["usage"]["agent"]["calls"] == 2


def test_custom_rule_based_simulator(converse: Call, portal_api: PortalAPI) -> None:
    copy = SpokeCopy("[P05]", new_name="crm4-dev-neu", address_space="10.82.0.0/22")
    user = {"class": RULE_USER, "params": {"request": copy.request, "max_messages": 3}}
    result = converse([copy.script(user=[])], "P05", {"simulated_user": user})

    assert "error" not in result, result.get("error")
    metadata = result["metadata"]
    check_contract(metadata)
    assert metadata["conversation_end"] == "done" and metadata["turns"] == 2
    assert metadata["transcript"][2]["content"] == "Yes, that's right, please go ahead."
    assert tool_names(metadata) == COPY_TOOLS and _created(metadata, portal_api)["spoke_name"] == "crm4-dev-neu"
    assert metadata["usage"]["user"]["calls"] == 0


def test_custom_simulator_gives_up_after_max_messages(converse: Call) -> None:
    script = SpokeCopy("[P06]").script(user=[])
    script = type(script)(script.key, ["Let me think about it."] * 2, ())
    user = {"class": RULE_USER, "params": {"request": "[P06] copy crm-dev-neu", "max_messages": 2}}
    result = converse([script], "P06", {"simulated_user": user})

    assert result["metadata"]["conversation_end"] == "gave_up" and result["metadata"]["turns"] == 2


def test_single_turn_the_prompt_is_the_message(converse: Call) -> None:
    copy = SpokeCopy("[P07]")
    result = converse([copy.script()], "P07", {}, config={"mode": "single_turn"}, prompt=copy.request)

    assert "error" not in result, result.get("error")
    metadata = result["metadata"]
    check_contract(metadata)
    assert metadata["turns"] == 1 and metadata["conversation_end"] == "done"
    assert tool_names(metadata) == ["get_spoke", "validate_spoke_config"]
    assert metadata["final_reply"].endswith("Shall I create the pull request?")
    assert prs(metadata) == []


def test_provider_overrides_reach_the_agent(converse: Call, scripted_llm: ScriptedOpenAIServer, tmp_path) -> None:
    instructions = tmp_path / "alt.md"
    instructions.write_text("You are a terse assistant. [alt-instructions]")
    copy = SpokeCopy("[P08]")
    config = {"mode": "single_turn", "instructions_file": "alt.md", "temperature": 0.7}
    result = converse([copy.script()], "P08", {}, config=config, prompt=copy.request)

    assert "error" not in result, result.get("error")
    agent_requests = [r for r in scripted_llm.requests if r.messages[-1].get("content") == copy.request]
    assert agent_requests[-1].messages[0]["content"] == "You are a terse assistant. [alt-instructions]"
    assert agent_requests[-1].temperature == 0.7
    assert result["metadata"]["agent"]["temperature"] == 0.7


def test_cost_and_tokens_cover_agent_and_user(converse: Call, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_PRICES", json.dumps({"agent-model": [2.0, 8.0], "user-model": [1.0, 1.0]}))
    copy = SpokeCopy("[P09]", new_name="crm5-dev-neu", address_space="10.89.0.0/22")
    result = converse([copy.script()], "P09", {"simulated_user": {"goal": "[P09] copy crm-dev-neu"}})

    usage = result["metadata"]["usage"]
    assert usage["agent"]["cost"] > 0 and usage["user"]["cost"] > 0
    assert result["cost"] == pytest.approx(usage["agent"]["cost"] + usage["user"]["cost"])
    assert result["tokenUsage"] == {
        "total": usage["agent"]["total_tokens"] + usage["user"]["total_tokens"],
        "prompt": usage["agent"]["prompt_tokens"] + usage["user"]["prompt_tokens"],
        "completion": usage["agent"]["completion_tokens"] + usage["user"]["completion_tokens"],
        "numRequests": 8,
    }


def test_one_mcp_session_for_the_whole_conversation(converse: Call, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[object] = []
    original = mcp_session.McpSession.__aenter__

    async def counting(self):  # type: ignore[no-untyped-def]
        opened.append(self)
        return await original(self)

    monkeypatch.setattr(mcp_session.McpSession, "__aenter__", counting)
    copy = SpokeCopy("[P10]", new_name="crm6-dev-neu", address_space="10.90.0.0/22")
    result = converse([copy.script()], "P10", {"user_messages": copy.fixed_messages()})

    assert "error" not in result and result["metadata"]["turns"] == 2
    assert len(opened) == 1
