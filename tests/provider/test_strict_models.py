"""The provider against the strict scripted server (a llama.cpp-like picky server): tools reach
the agent's model, tool-call turns go on, and runaway replies are capped and named."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_evals.testing.conversations import AGENT_MODEL, USER_MODEL, ConversationScript
from agent_evals.packs.spoke.scripts import SpokeCopy
from agent_evals.testing.scripted_openai import Reply, ScriptedOpenAIServer
from tests.spoke_prs import prs

from .conftest import Call, check_contract, tool_names


@pytest.fixture
def strict(scripted_llm: ScriptedOpenAIServer) -> Iterator[ScriptedOpenAIServer]:
    scripted_llm.strict = True
    scripted_llm.clear_requests()
    try:
        yield scripted_llm
    finally:
        scripted_llm.strict = False


def agent_requests(server: ScriptedOpenAIServer) -> list:
    return [r for r in server.requests if r.model == AGENT_MODEL]


def test_tools_reach_the_agent_and_tool_call_turns_go_on(converse: Call, strict: ScriptedOpenAIServer) -> None:
    copy = SpokeCopy("[S01]", new_name="crm5-dev-neu", address_space="10.84.0.0/22")
    result = converse([copy.script()], "S01", {"user_messages": copy.fixed_messages()})

    assert "error" not in result, result.get("error")
    metadata = result["metadata"]
    check_contract(metadata)
    assert metadata["conversation_end"] == "done" and len(prs(metadata)) == 1
    assert tool_names(metadata) == ["get_spoke", "validate_spoke_config", "create_spoke_pull_request"]
    requests = agent_requests(strict)
    assert len(requests) == 5 and all(r.tools for r in requests)  # shown every time, thanks to tool_choice
    assert requests[1].messages[-2]["content"] == ""  # the assistant's tool-call message, accepted
    assert {r.body["max_tokens"] for r in requests} == {2048}


def test_without_tool_choice_the_agent_never_sees_its_tools(
    converse: Call, strict: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what issue 13 measured on llama.cpp: the tools silently dropped; here the script's tool call fails loudly
    monkeypatch.setenv("LLM_TOOL_CHOICE", "omit")
    copy = SpokeCopy("[S02]", new_name="crm6-dev-neu", address_space="10.85.0.0/22")
    result = converse([copy.script()], "S02", {"user_messages": copy.fixed_messages()})
    assert result["error"].startswith("[model] HTTP 500 from the model server")
    assert "showed the model no tools" in result["error"]
    assert agent_requests(strict)[0].tools is None


def test_a_runaway_simulated_user_is_capped_and_named(converse: Call, strict: ScriptedOpenAIServer) -> None:
    copy = SpokeCopy("[S03]", new_name="crm7-dev-neu", address_space="10.86.4.0/22")
    user = {"goal": "[S03] get a copy of crm-dev-neu", "persona": "chatty"}
    runaway = ConversationScript(copy.key, copy.agent_steps(), [Reply.runaway("Hello! So, about my network, ")])
    result = converse([runaway], "S03", {"simulated_user": user}, config={"user_max_tokens": 50})

    metadata = result["metadata"]
    check_contract(metadata)
    assert result["error"].startswith(
        "[user_simulator] the simulated user's reply was cut off at 50 tokens (its completion cap: "
        "LLM_MAX_TOKENS_USER or the provider's user_max_tokens): 'Hello! So, about my network, and so on"
    )
    assert metadata["error_kind"] == "user_simulator" and metadata["turns"] == 0
    [request] = [r for r in strict.requests if r.model == USER_MODEL]
    assert request.body["max_tokens"] == 50
    assert metadata["usage"]["user"]["completion_tokens"] == 50  # what the runaway cost is counted


def test_the_users_default_cap_applies(converse: Call, strict: ScriptedOpenAIServer) -> None:
    copy = SpokeCopy("[S04]", new_name="crm8-dev-neu", address_space="10.86.8.0/22")
    runaway = ConversationScript(copy.key, copy.agent_steps(), [Reply.runaway()])
    result = converse([runaway], "S04", {"simulated_user": {"goal": "[S04] a copy"}})
    assert "cut off at 300 tokens" in result["error"]


def test_an_agent_that_runs_away_ends_the_conversation_max_tokens(converse: Call, strict: ScriptedOpenAIServer) -> None:
    copy = SpokeCopy("[S05]", new_name="crm9-dev-neu", address_space="10.86.12.0/22")
    runaway = ConversationScript(copy.key, [Reply.runaway("Let me explain networks. ")], [])
    result = converse([runaway], "S05", {"user_messages": copy.fixed_messages()}, config={"max_tokens": 64})

    assert "error" not in result, result.get("error")
    metadata = result["metadata"]
    check_contract(metadata)
    assert (metadata["conversation_end"], metadata["ended_by"]) == ("max_tokens", "limit")
    assert metadata["transcript"][-1]["stop_reason"] == "max_tokens"
    assert len(metadata["final_reply"]) == 64 * 4 and metadata["turns"] == 1
    assert agent_requests(strict)[0].body["max_tokens"] == 64


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"max_tokens": 0}, "max_tokens: Input should be greater than or equal to 1"),
        ({"user_max_tokens": 40000}, "user_max_tokens: Input should be less than or equal to 32768"),
        ({"max_tokens": "lots"}, "max_tokens: Input should be a valid integer"),
    ],
)
def test_bad_caps_in_the_provider_config_are_config_errors(
    converse: Call, strict: ScriptedOpenAIServer, config: dict, message: str
) -> None:
    copy = SpokeCopy("[S06]")
    result = converse([copy.script()], "S06", {"user_messages": copy.fixed_messages()}, config=config)
    assert result["error"].startswith("[config] bad provider configuration:") and message in result["error"]
    assert not agent_requests(strict)


def test_a_bad_cap_in_the_environment_is_a_config_error(
    converse: Call, strict: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_MAX_TOKENS_AGENT", "-1")
    copy = SpokeCopy("[S07]")
    result = converse([copy.script()], "S07", {"user_messages": copy.fixed_messages()})
    assert result["error"] == (
        "[config] LLM_MAX_TOKENS_AGENT must be a whole number of tokens from 1 to 32768, got '-1'"
    )


def test_arguments_that_are_not_json_go_back_to_the_model_and_the_turn_goes_on(
    converse: Call, strict: ScriptedOpenAIServer
) -> None:
    copy = SpokeCopy("[S08]")
    steps = [Reply.tool_calls([("get_spoke", '{"name": "crm-dev-neu"')]),  # cut short: not JSON
             Reply.tool_calls([("get_spoke", "{&quot;name&quot;: &quot;crm-dev-neu&quot;}")]),  # HTML-escaped
             "crm-dev-neu has 3 subnets."]
    result = converse([ConversationScript(copy.key, steps)], "S08", {"user_messages": [copy.request]})

    assert "error" not in result, result.get("error")
    metadata = result["metadata"]
    check_contract(metadata)
    bad, repaired = metadata["tool_calls"]
    assert (bad["outcome"], bad["raw_arguments"]) == ("invalid_arguments", '{"name": "crm-dev-neu"')
    assert (repaired["outcome"], repaired["arguments"]) == ("ok", {"name": "crm-dev-neu"})
    second = agent_requests(strict)[1]  # the strict server accepted the turn after the bad call
    assert second.messages[-1]["role"] == "tool" and "not a JSON object" in second.messages[-1]["content"]
    assert metadata["final_reply"] == "crm-dev-neu has 3 subnets."
