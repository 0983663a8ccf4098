import asyncio

import pytest

from agent_evals.conversation.driver import describe_error, run_conversation
from agent_evals.conversation.users import FixedMessages, UserMessage
from agent_evals.record import End, RunRecord, SideEffect
from tests.toy_pack import PACK

from .fakes import FakeAgent, QuietAgent, reply, tool_call

PR = {"id": 7, "url": "https://desk.example/tickets/7", "status": "open"}
find_pr = PACK.system.side_effect


def _run(agent, user, record: RunRecord | None = None, **kwargs) -> RunRecord:
    record = record if record is not None else RunRecord(case_id="C01")
    return asyncio.run(run_conversation(agent, user, record=record, find_side_effect=find_pr, **kwargs))


@pytest.mark.parametrize("agent_class", [FakeAgent, QuietAgent], ids=["reports-calls", "own-agent"])
def test_fixed_messages_end_done_and_the_record_has_everything(agent_class) -> None:
    agent = agent_class([
        reply("Shall I?", tool_call("get_queue", {"name": "a"}, name="a")),
        reply("Done: " + PR["url"], tool_call("open_ticket", PR, queue="b")),
    ])
    record = _run(agent, FixedMessages(["copy a", "yes"]))

    assert record.end == End("done") and record.end.by == "user"
    assert [t.user for t in record.turns] == ["copy a", "yes"]
    assert [(c.turn, c.index, c.name) for c in record.tool_calls] == [
        (1, 1, "get_queue"), (2, 2, "open_ticket")
    ]
    assert record.side_effects == [SideEffect("ticket", "7", PR["url"])]
    assert record.final_reply == "Done: " + PR["url"] and record.user_messages_sent == 2
    # the agent sees the whole history each turn
    assert [m["content"] for m in agent.histories[1]] == ["copy a", "Shall I?", "yes"]


def test_max_turns_ends_when_the_user_would_say_more() -> None:
    record = _run(FakeAgent([reply("?"), reply("?")]), FixedMessages(["a", "b", "c"]), max_turns=2)
    assert record.end == End("max_turns") and record.end.by == "limit" and len(record.turns) == 2


def test_a_stop_at_the_limit_is_still_done() -> None:
    record = _run(FakeAgent([reply("ok"), reply("ok")]), FixedMessages(["a", "b"]), max_turns=2)
    assert record.end == End("done")


def test_the_tool_round_limit_ends_the_conversation() -> None:
    agent = FakeAgent([reply("I stopped before finishing", stop_reason="max_tool_rounds"), reply("never")])
    record = _run(agent, FixedMessages(["a", "b"]))
    assert record.end == End("max_tool_rounds") and record.end.by == "limit"
    assert record.turns[0].stop_reason == "max_tool_rounds" and len(agent.replies) == 1


@pytest.mark.parametrize("max_turns", [0, 101])
def test_max_turns_is_checked(max_turns: int) -> None:
    with pytest.raises(ValueError, match="max_turns must be between 1 and 100"):
        _run(FakeAgent([]), FixedMessages(["a"]), max_turns=max_turns)


def test_an_error_keeps_the_calls_of_the_broken_turn_and_the_unanswered_message() -> None:
    pr_call = tool_call("open_ticket", PR)
    agent = FakeAgent([reply("Looked"), (pr_call, RuntimeError("model gone"))])
    record = RunRecord(case_id="C01")
    with pytest.raises(RuntimeError):
        _run(agent, FixedMessages(["copy", "and create it"]), record=record)
    assert record.end is None  # the caller ends it with the error's kind
    assert record.pending is not None and record.pending.user == "and create it" and not record.pending.answered
    assert [c.name for c in record.tool_calls] == ["open_ticket"]
    assert record.user_messages_sent == 2 and record.side_effects == [SideEffect("ticket", "7", PR["url"])]


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
    assert record.end == End("gave_up") and len(record.turns) == 1


def test_describe_error_unwraps_single_exception_groups() -> None:
    group = ExceptionGroup("outer", [ExceptionGroup("inner", [ConnectionError("refused")])])
    assert describe_error(group) == "ConnectionError: refused"
    assert describe_error(RuntimeError()) == "RuntimeError"


def test_a_reply_cut_off_at_the_cap_ends_the_conversation_by_the_limit() -> None:
    record = _run(FakeAgent([reply("Here is the pl", stop_reason="max_tokens"), reply("never")]), FixedMessages(["a", "b"]))
    assert record.end == End("max_tokens") and record.end.by == "limit"
