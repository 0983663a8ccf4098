import asyncio

import pytest

from agent_evals.conversation.driver import (
    ConversationRecord,
    describe_error,
    pull_request_from,
    run_conversation,
)
from agent_evals.conversation.users import FixedMessages, UserMessage

from .fakes import FakeAgent, reply, tool_call

PR = {"id": 7, "url": "http://127.0.0.1:1/repos/spokes/pullrequest/7", "status": "active"}


def _run(agent: FakeAgent, user, **kwargs) -> ConversationRecord:
    return asyncio.run(run_conversation(agent, user, **kwargs))


def test_fixed_messages_end_done_and_the_record_has_everything() -> None:
    agent = FakeAgent([
        reply("Shall I?", tool_call("get_spoke", {"name": "a"}, name="a")),
        reply("Done: " + PR["url"], tool_call("create_spoke_pull_request", PR, spoke_name="b")),
    ])
    record = _run(agent, FixedMessages(["copy a", "yes"]))

    assert record.end == "done" and record.error is None
    assert [t.user for t in record.turns] == ["copy a", "yes"]
    assert [(turn, c.name) for turn, c in record.tool_calls] == [(1, "get_spoke"), (2, "create_spoke_pull_request")]
    assert record.pull_requests == [{"id": 7, "url": PR["url"]}]
    assert record.final_reply == "Done: " + PR["url"] and record.user_messages_sent == 2
    assert record.agent_usage.calls == 2 and record.agent_usage.total_tokens == 22
    # the agent sees the whole history each turn
    assert [m["content"] for m in agent.histories[1]] == ["copy a", "Shall I?", "yes"]


def test_max_turns_ends_when_the_user_would_say_more() -> None:
    record = _run(FakeAgent([reply("?"), reply("?")]), FixedMessages(["a", "b", "c"]), max_turns=2)
    assert record.end == "max_turns" and len(record.turns) == 2


def test_a_stop_at_the_limit_is_still_done() -> None:
    record = _run(FakeAgent([reply("ok"), reply("ok")]), FixedMessages(["a", "b"]), max_turns=2)
    assert record.end == "done"


@pytest.mark.parametrize("max_turns", [0, 101])
def test_max_turns_is_checked(max_turns: int) -> None:
    with pytest.raises(ValueError, match="max_turns must be between 1 and 100"):
        _run(FakeAgent([]), FixedMessages(["a"]), max_turns=max_turns)


def test_an_error_keeps_the_partial_record_and_the_unanswered_message() -> None:
    agent = FakeAgent([reply("Done", tool_call("create_spoke_pull_request", PR)), RuntimeError("model gone")])
    record = ConversationRecord()
    with pytest.raises(RuntimeError):
        _run(agent, FixedMessages(["copy", "and another"]), record=record)
    assert record.end == "error" and record.error == "RuntimeError: model gone"
    assert record.pending_user_message == "and another" and record.user_messages_sent == 2
    assert record.pull_requests == [{"id": 7, "url": PR["url"]}]


def test_the_user_message_is_checked_before_the_agent_sees_it() -> None:
    seen: list[tuple[int, str]] = []

    def check(number: int, text: str) -> None:
        seen.append((number, text))
        if text == "b":
            raise ValueError("not in the cassette")

    agent = FakeAgent([reply("ok"), reply("never")])
    with pytest.raises(ValueError):
        _run(agent, FixedMessages(["a", "b"]), on_user_message=check)
    assert seen == [(1, "a"), (2, "b")] and len(agent.histories) == 1


def test_a_custom_user_stops_gave_up() -> None:
    class Impatient(FixedMessages):
        def next_message(self, turns):
            return UserMessage.stop("gave_up") if turns else UserMessage.say("hi")

    record = _run(FakeAgent([reply("?")]), Impatient(["x"]))
    assert record.end == "gave_up" and len(record.turns) == 1


@pytest.mark.parametrize(
    ("result", "is_error", "name", "expected"),
    [
        (PR, False, "create_spoke_pull_request", {"id": 7, "url": PR["url"]}),
        ({"url": PR["url"]}, False, "create_spoke_pull_request", {"id": 7, "url": PR["url"]}),  # id from the URL
        (PR, True, "create_spoke_pull_request", None),  # a failed call made no PR
        (PR, False, "get_pull_request", None),  # reading a PR is not creating one
        ("Error: conflict", False, "create_spoke_pull_request", None),
    ],
)
def test_pull_request_from(result, is_error: bool, name: str, expected) -> None:
    assert pull_request_from(tool_call(name, result, is_error=is_error)) == expected


def test_describe_error_unwraps_single_exception_groups() -> None:
    group = ExceptionGroup("outer", [ExceptionGroup("inner", [ConnectionError("refused")])])
    assert describe_error(group) == "ConnectionError: refused"
    assert describe_error(RuntimeError()) == "RuntimeError"
