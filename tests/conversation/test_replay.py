"""Record and replay through the real agent loop, with fake tools and a fake model (no portal, no server)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any, Self

import pytest

from agent_evals.agent.loop import run_turn
from agent_evals.agent.types import ToolResult
from agent_evals.conversation.cassette import Cassette, Outcome
from agent_evals.conversation.driver import ConversationRecord, run_conversation
from agent_evals.conversation.replay import (
    CassetteDivergence,
    RecordingChatModel,
    ReplaySession,
    finish_recording,
)
from agent_evals.conversation.users import FixedMessages
from agent_evals.llm.types import ChatResponse, ToolCallRequest, Usage

from .fakes import FakeAgent

BASE = "http://127.0.0.1:{port}/repos/spokes/pullrequest/{id}"


class Tools:
    """Fake portal tools: validation verdict and PR id are set per run."""

    def __init__(self, pr_id: int, port: int, valid: bool = True) -> None:
        self.pr_id, self.port, self.valid = pr_id, port, valid
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @property
    def specs(self) -> list[dict[str, Any]]:
        names = ("validate_spoke_config", "create_spoke_pull_request", "get_pull_request")
        return [{"type": "function", "function": {"name": n, "parameters": {}}} for n in names]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        self.calls.append((name, dict(arguments)))
        if name == "validate_spoke_config":
            value: Any = {"valid": self.valid, "errors": []}
        else:
            value = {"id": self.pr_id, "url": BASE.format(port=self.port, id=self.pr_id), "status": "active"}
        return ToolResult(value=value, text=json.dumps(value), is_error=False)


class Scripted:
    """A chat model answering from a list of responses."""

    model = "scripted"

    def __init__(self, responses: Sequence[ChatResponse]) -> None:
        self.responses = list(responses)

    async def complete(self, messages, *, tools=None, temperature=None) -> ChatResponse:
        return self.responses.pop(0)


class LoopAgent:
    """The production loop over fake tools (what the factory's Agent does over MCP)."""

    def __init__(self, model: Any, tools: Tools) -> None:
        self.model, self.tools = model, tools

    info = FakeAgent([]).info

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def respond(self, history):
        return await run_turn(model=self.model, tools=self.tools, system_prompt="sys", history=history,
                              temperature=None, max_tool_rounds=5)


def _calls(*calls: tuple[str, dict[str, Any]]) -> ChatResponse:
    requests = tuple(ToolCallRequest(f"c{i}", n, json.dumps(a)) for i, (n, a) in enumerate(calls))
    return ChatResponse(content=None, tool_calls=requests, usage=Usage(5, 5, 10, 1, 0.0))


def _text(text: str) -> ChatResponse:
    return ChatResponse(content=text, usage=Usage(5, 5, 10, 1, 0.0))


SCRIPT = [
    _calls(("validate_spoke_config", {"config": {"name": "x", "priority": 3}})),
    _text("Valid. Create it?"),
    _calls(("create_spoke_pull_request", {"spoke_name": "x", "config": {"name": "x", "priority": 3}})),
    _text("Done: " + BASE.format(port=9000, id=3)),
    _calls(("get_pull_request", {"id": 3})),
    _text("PR 3 is active: " + BASE.format(port=9000, id=3)),
]
MESSAGES = ["copy x", "yes", "is it open?"]


def _record() -> tuple[Cassette, ConversationRecord]:
    cassette = Cassette(case_id="C01", user={"kind": "user_messages"})
    agent = LoopAgent(RecordingChatModel(Scripted(SCRIPT), "agent", cassette), Tools(pr_id=3, port=9000))
    record = asyncio.run(run_conversation(agent, FixedMessages(MESSAGES)))
    return finish_recording(cassette, record), record


def _replay(cassette: Cassette, tools: Tools, messages: Sequence[str] = MESSAGES) -> ConversationRecord:
    session = ReplaySession(cassette, "C01.json")
    record = ConversationRecord()
    agent = LoopAgent(session.model("agent"), tools)

    async def run() -> None:
        await run_conversation(agent, FixedMessages(messages), record=record, on_turn=session.check_turn,
                               on_user_message=session.check_user_message)
        session.finish(record)

    asyncio.run(run())
    return record


def test_recording_keeps_responses_tool_calls_messages_and_outcome() -> None:
    cassette, _ = _record()
    assert [c.role for c in cassette.model_calls] == ["agent"] * 6
    assert [(c.turn, c.name) for c in cassette.tool_calls] == [
        (1, "validate_spoke_config"), (2, "create_spoke_pull_request"), (3, "get_pull_request"),
    ]
    assert cassette.user_messages == MESSAGES
    assert cassette.outcome == Outcome(
        conversation_end="done", turns=3, pull_requests=[{"id": 3, "url": BASE.format(port=9000, id=3)}]
    )


def test_replay_translates_pr_ids_and_urls_but_not_other_numbers() -> None:
    cassette, _ = _record()
    tools = Tools(pr_id=17, port=8123)
    record = _replay(cassette, tools)

    new_url = BASE.format(port=8123, id=17)
    assert record.end == "done" and record.pull_requests == [{"id": 17, "url": new_url}]
    assert record.turns[1].assistant == "Done: " + new_url
    assert record.turns[2].assistant == "PR 3 is active: " + new_url  # free-text numbers are left alone
    assert tools.calls[2] == ("get_pull_request", {"id": 17})  # an id argument is translated
    assert tools.calls[1][1]["config"] == {"name": "x", "priority": 3}  # a non-id number is not


@pytest.mark.parametrize(
    ("tools", "messages", "divergence"),
    [
        (Tools(3, 9000, valid=False), MESSAGES,
         "tool call 1 (validate_spoke_config, turn 1): valid was true when recorded, now false"),
        (Tools(3, 9000), ["copy x", "no"], "turn 2: the user said 'no', the cassette recorded 'yes'"),
        (Tools(3, 9000), [*MESSAGES, "thanks"],
         "turn 4: the user sent a message the cassette doesn't have (it recorded 3): 'thanks'"),
        (Tools(3, 9000), MESSAGES[:2],
         "the run ended after 2 user message(s) (done), but the cassette has 2 more model response(s)"),
    ],
)
def test_divergences_are_named(tools: Tools, messages: list[str], divergence: str) -> None:
    cassette, _ = _record()
    with pytest.raises(CassetteDivergence) as caught:
        _replay(cassette, tools, messages)
    assert str(caught.value).startswith("cassette C01.json no longer fits the run: ")
    assert divergence in str(caught.value)


def test_a_divergence_in_a_user_message_stops_before_the_tools_run() -> None:
    cassette, _ = _record()
    tools = Tools(3, 9000)
    with pytest.raises(CassetteDivergence):
        _replay(cassette, tools, ["copy x", "no"])
    assert [name for name, _ in tools.calls] == ["validate_spoke_config"]


def test_a_tool_that_now_fails_is_a_divergence() -> None:
    class Failing(Tools):
        async def call(self, name, arguments):
            if name == "create_spoke_pull_request":
                return ToolResult(value="conflict", text="conflict: branch exists", is_error=True)
            return await super().call(name, arguments)

    cassette, _ = _record()
    with pytest.raises(CassetteDivergence, match=r"tool call 2 \(create_spoke_pull_request, turn 2\) succeeded "
                                                 r"when recorded, now failed: Error: conflict: branch exists"):
        _replay(cassette, Failing(3, 9000))


def test_running_out_of_a_cassette_recorded_from_a_failed_run_says_so() -> None:
    cassette, _ = _record()
    cassette.model_calls = cassette.model_calls[:3]
    cassette.outcome = Outcome(conversation_end="error", turns=2, error="LLMError: model overloaded")
    with pytest.raises(CassetteDivergence, match=r"has only 3 \(the recording itself ended in an error: "
                                                 r"LLMError: model overloaded\)"):
        _replay(cassette, Tools(3, 9000))


def test_the_user_kind_must_match() -> None:
    session = ReplaySession(Cassette(case_id="C01", user={"kind": "simulated_user"}), "C01.json")
    session.check_user_kind("simulated_user")
    with pytest.raises(CassetteDivergence, match="recorded with a simulated_user user, this run uses user_messages"):
        session.check_user_kind("user_messages")
