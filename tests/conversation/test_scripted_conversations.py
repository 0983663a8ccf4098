"""The stateless scripted conversations the provider tests and benchmarks use."""

import json

from agent_evals.testing.conversations import ConversationScript, ScriptedConversations
from agent_evals.packs.spoke.scripts import SpokeCopy, relocate
from agent_evals.testing.scripted_replies import ChatRequest, Reply

SOURCE = {
    "name": "crm-dev-neu",
    "addressSpace": ["10.20.24.0/22"],
    "subnets": [{"name": "snet-app", "addressPrefix": "10.20.24.0/24",
                 "nsgRules": [{"sourceAddressPrefix": "10.0.2.0/26", "destinationAddressPrefix": "10.20.24.0/24"}]},
                {"name": "snet-data", "addressPrefix": "10.20.25.0/26"}],
}


def _request(model: str, messages: list[dict], tools: list | None = None) -> ChatRequest:
    return ChatRequest(path="/v1/chat/completions", model=model, messages=messages, tools=tools, temperature=None,
                       headers={}, query={}, body={})


def test_relocate_moves_every_address_inside_the_old_space_only() -> None:
    moved = relocate(SOURCE, "crm2-dev-neu", "10.80.0.0/22")
    assert moved["name"] == "crm2-dev-neu" and moved["addressSpace"] == ["10.80.0.0/22"]
    assert [s["addressPrefix"] for s in moved["subnets"]] == ["10.80.0.0/24", "10.80.1.0/26"]
    rule = moved["subnets"][0]["nsgRules"][0]
    assert rule == {"sourceAddressPrefix": "10.0.2.0/26", "destinationAddressPrefix": "10.80.0.0/24"}  # hub kept
    assert SOURCE["name"] == "crm-dev-neu"  # the source is not changed


def test_steps_follow_the_number_of_replies_and_keys_pick_the_script() -> None:
    scripts = ScriptedConversations([
        ConversationScript("[A]", agent=["a1", "a2"], user=["[A] hi", "bye"]),
        ConversationScript("[B]", agent=["b1"]),
    ])
    first = _request("agent-model", [{"role": "system", "content": "s"}, {"role": "user", "content": "[A] hi"}], [{}])
    assert scripts(first).message["content"] == "a1"
    later = _request("agent-model", [*first.messages, {"role": "assistant", "content": "a1"},
                                     {"role": "user", "content": "more"}], [{}])
    assert scripts(later).message["content"] == "a2"
    user = _request("user-model", [{"role": "system", "content": "goal: [A] copy"}, {"role": "user", "content": "o"}])
    assert scripts(user).message["content"] == "[A] hi"
    other = _request("agent-model", [{"role": "user", "content": "[B] yo"}], [{}])
    assert scripts(other).message["content"] == "b1"


def test_unknown_conversations_and_exhausted_scripts_fail_without_retry() -> None:
    scripts = ScriptedConversations([ConversationScript("[A]", agent=["a1"])])
    unknown = scripts(_request("agent-model", [{"role": "user", "content": "[Z]"}]))
    assert unknown.status == 500 and "no script matches this agent request" in json.dumps(unknown.body)
    done = scripts(_request("agent-model", [{"role": "user", "content": "[A]"}, {"role": "assistant", "content": "a1"}]))
    assert done.status == 500 and "has no step 2 (has 1)" in json.dumps(done.body)
    assert done.headers == {"x-should-retry": "false"}


def test_one_model_for_both_roles_is_told_apart_by_the_tools() -> None:
    scripts = ScriptedConversations(
        [ConversationScript("[A]", agent=["agent says"], user=["[A] user says"])], agent_model="m", user_model="m"
    )
    assert scripts(_request("m", [{"role": "user", "content": "[A]"}], tools=[{}])).message["content"] == "agent says"
    user = _request("m", [{"role": "system", "content": "[A] goal"}])
    assert scripts(user).message["content"] == "[A] user says"


def test_spoke_copy_script() -> None:
    copy = SpokeCopy("[C9]", new_name="x-dev-neu", address_space="10.90.0.0/22")
    script = copy.script()
    assert script.user[0] == copy.request and copy.request.startswith("[C9] ")
    assert isinstance(script.agent[0], Reply) and len(script.agent) == 5
    assert copy.fixed_messages() == [copy.request, "Yes, that's right, please create it."]
