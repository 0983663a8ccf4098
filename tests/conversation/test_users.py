import asyncio

import pytest

from agent_evals.conversation.users import (
    BaseUserSimulator,
    FixedMessages,
    Turn,
    UserMessage,
    parse_user_reply,
    simulated_user_prompt,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Thanks, that's all!\n[DONE]", UserMessage(end="done")),
        ("[GIVE UP]", UserMessage(end="gave_up")),
        ("I give up. [gave up]", UserMessage(end="gave_up")),
        ("   ", UserMessage(end="gave_up")),  # an empty reply cannot go on
        ("Yes, please create it.", UserMessage(text="Yes, please create it.")),
    ],
)
def test_parse_user_reply(text: str, expected: UserMessage) -> None:
    assert parse_user_reply(text) == expected


def test_fixed_messages_in_order_then_done() -> None:
    user = FixedMessages(["one", "two"])
    assert asyncio.run(user.next([])) == UserMessage(text="one")
    assert asyncio.run(user.next([Turn("one", "ok")])) == UserMessage(text="two")
    assert asyncio.run(user.next([Turn("one", "ok"), Turn("two", "ok")])) == UserMessage(end="done")


@pytest.mark.parametrize("messages", [[], [""], ["ok", "  "], [3]])
def test_fixed_messages_reject_empty(messages: list) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        FixedMessages(messages)


def test_stop_reason_is_validated() -> None:
    with pytest.raises(ValueError, match="'done', 'gave_up'"):
        UserMessage.stop("finished")  # type: ignore[arg-type]


def test_custom_simulator_may_be_async_and_must_return_a_user_message() -> None:
    class Async(BaseUserSimulator):
        async def next_message(self, turns):  # type: ignore[override]
            return UserMessage.say(self.params["say"])

    class Wrong(BaseUserSimulator):
        def next_message(self, turns):
            return "hello"

    assert asyncio.run(Async(params={"say": "hi"}).next([])) == UserMessage(text="hi")
    with pytest.raises(TypeError, match="expected a UserMessage"):
        asyncio.run(Wrong().next([]))


def test_simulated_user_prompt_carries_goal_persona_facts_and_rules() -> None:
    prompt = simulated_user_prompt(
        "Get a copy of dev-weu-payments", "terse", {"cost centre": "CC-1234"}, "Answer in German."
    )
    assert "Get a copy of dev-weu-payments" in prompt
    assert "terse" in prompt
    assert "- cost centre: CC-1234" in prompt
    assert "Answer in German." in prompt
    assert "Never correct the assistant" in prompt
    assert "[DONE]" in prompt and "[GIVE UP]" in prompt
