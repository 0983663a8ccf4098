"""The loop on its own: a queued fake model and an in-memory tool executor (no I/O).

The same cases run end to end through the real openai client and the real portal in
``test_agent_live.py`` (and over stdio servers in ``test_mcp_tools.py``); here each rule of the loop is checked in isolation.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from agent_evals.agent.loop import MAX_ROUNDS_REPLY, parse_arguments, run_turn
from agent_evals.agent.errors import ServerUnavailable
from agent_evals.agent.types import AgentReply, ToolResult
from agent_evals.llm.types import ChatResponse, Message, ToolSpec
from agent_evals.record import ToolCall, Usage


class QueuedModel:
    """Answers with queued responses and records what it was asked."""

    def __init__(self, responses: Sequence[ChatResponse]) -> None:
        self.responses = list(responses)
        self.requests: list[list[Message]] = []

    @property
    def model(self) -> str:
        return "queued"

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
    ) -> ChatResponse:
        self.requests.append([dict(m) for m in messages])
        return self.responses.pop(0)


class Tools:
    """Two tools: ``echo`` (of server ``notes``) answers its arguments, ``fail`` (of server ``portal``) answers
    an error result; ``boom`` raises."""

    def __init__(self, raises: BaseException | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.raises = raises

    @property
    def specs(self) -> list[ToolSpec]:
        return [_spec(name) for name in ("echo", "fail", "boom")]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        self.calls.append((name, dict(arguments)))
        if name == "boom":
            raise self.raises or ValueError("kaput")
        if name == "fail":
            return ToolResult(
                value="Error executing tool fail: no such spoke",
                text="Error executing tool fail: no such spoke",
                is_error=True,
                server="portal",
            )
        return ToolResult(value=dict(arguments), text=str(dict(arguments)), is_error=False, server="notes")


def _spec(name: str) -> ToolSpec:
    return {
        "type": "function",
        "function": {"name": name, "description": name, "parameters": {"type": "object"}},
    }


def calls(*specs: tuple[str, str]) -> ChatResponse:
    requests = tuple(ToolCall.request(f"c{i}", n, a) for i, (n, a) in enumerate(specs))
    return ChatResponse(content=None, tool_calls=requests, usage=Usage(10, 2, 12, 1))


def text(content: str) -> ChatResponse:
    return ChatResponse(content=content, usage=Usage(20, 3, 23, 1))


def turn(model: QueuedModel, tools: Tools, max_tool_rounds: int = 5, seen: list[ToolCall] | None = None) -> AgentReply:
    return asyncio.run(
        run_turn(
            model=model,
            tools=tools,
            system_prompt="You are a test.",
            history=[{"role": "user", "content": "hi"}],
            temperature=None,
            max_tool_rounds=max_tool_rounds,
            on_tool_call=seen.append if seen is not None else None,
        )
    )


def tool_messages(messages: Sequence[Message]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "tool"]


def test_a_text_reply_ends_the_turn() -> None:
    model = QueuedModel([text("hello")])
    reply = turn(model, Tools())
    assert (reply.text, reply.stop_reason, reply.tool_calls) == ("hello", "reply", ())
    assert reply.messages == ({"role": "assistant", "content": "hello"},)
    assert model.requests[0][0] == {"role": "system", "content": "You are a test."}


def test_tool_results_are_fed_back_and_everything_is_recorded() -> None:
    model = QueuedModel([calls(("echo", '{"a": 1}'), ("echo", "")), text("done")])
    tools = Tools()
    reply = turn(model, tools)
    assert tools.calls == [("echo", {"a": 1}), ("echo", {})]  # empty arguments mean no arguments
    first, second = reply.tool_calls
    assert (first.name, first.arguments, first.raw_arguments, first.result, first.outcome) == (
        "echo",
        {"a": 1},
        '{"a": 1}',
        {"a": 1},
        "ok",
    )
    assert first.duration_ms >= 0 and second.arguments == {}
    assert (first.server, second.server) == ("notes", "notes")  # the server the executor says answered
    assert tool_messages(model.requests[1]) == ["{'a': 1}", "{}"]
    assert [m["role"] for m in reply.messages] == ["assistant", "tool", "tool", "assistant"]
    assert reply.usage == Usage(30, 5, 35, 2)


@pytest.mark.parametrize(
    ("name", "raw", "outcome", "expected_in_message"),
    [
        # not JSON at all
        ("echo", "{not json", "invalid_arguments", "the arguments for echo are not a JSON object (invalid JSON"),
        # JSON, but not an object
        ("echo", "[1, 2]", "invalid_arguments",
         "the arguments for echo are not a JSON object (expected an object, got list)"),
        # a tool that exists nowhere
        (
            "format_disk",
            "{}",
            "refused",
            "'format_disk' is not one of your tools, so it was not called; your tools are: boom, echo, fail",
        ),
    ],
    ids=["unparsable", "not-an-object", "unknown-tool"],
)
def test_bad_calls_are_not_executed_and_the_model_is_told(
    name: str, raw: str, outcome: str, expected_in_message: str
) -> None:
    model = QueuedModel([calls((name, raw)), text("sorry")])
    tools = Tools()
    reply = turn(model, tools)
    assert tools.calls == []  # never called
    (call,) = reply.tool_calls
    assert call.outcome == outcome and call.is_error and not call.ran
    assert call.raw_arguments == raw and call.duration_ms == 0.0 and call.server is None  # it reached no server
    assert expected_in_message in call.result
    (fed_back,) = tool_messages(model.requests[1])
    assert fed_back.startswith("Error: ") and expected_in_message in fed_back
    assert reply.text == "sorry"


def test_a_tool_error_result_reaches_the_model_as_an_error() -> None:
    model = QueuedModel([calls(("fail", "{}")), text("it failed")])
    reply = turn(model, Tools())
    (call,) = reply.tool_calls
    assert call.outcome == "tool_error" and call.result == "Error executing tool fail: no such spoke"
    assert call.server == "portal"
    assert tool_messages(model.requests[1]) == ["Error executing tool fail: no such spoke"]


def test_a_tool_that_raises_becomes_an_error_result(caplog: pytest.LogCaptureFixture) -> None:
    model = QueuedModel([calls(("boom", "{}"), ("echo", '{"x": 1}')), text("ok")])
    with caplog.at_level(logging.WARNING, logger="agent_evals.agent.loop"):
        reply = turn(model, Tools())
    boom, echo = reply.tool_calls
    assert boom.outcome == "tool_error" and boom.result == "Error: the tool failed: ValueError: kaput"
    assert echo.outcome == "ok"  # the turn went on
    assert "tool boom raised ValueError" in caplog.text


def test_a_server_that_is_gone_ends_the_turn() -> None:
    model = QueuedModel([calls(("boom", "{}")), text("never")])
    with pytest.raises(ServerUnavailable, match="down") as caught:
        turn(model, Tools(raises=ServerUnavailable("MCP server 'notes' is down")))
    assert caught.value.kind == "system"


def test_calls_made_before_a_failure_were_already_reported() -> None:
    """A turn that breaks off half-way has told its observer every call it made (a PR may exist)."""

    class DiesSecond(Tools):
        async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
            if self.calls:
                raise ServerUnavailable("the portal went away")
            return await super().call(name, arguments)

    model = QueuedModel([calls(("echo", '{"a": 1}')), calls(("echo", '{"b": 2}')), text("never")])
    seen: list[ToolCall] = []
    with pytest.raises(ServerUnavailable):
        turn(model, DiesSecond(), seen=seen)
    assert [(c.name, c.arguments, c.outcome) for c in seen] == [("echo", {"a": 1}, "ok")]


def test_endless_tool_calling_stops_at_max_tool_rounds() -> None:
    model = QueuedModel(
        [
            calls(("echo", '{"n": 1}')),
            calls(("echo", '{"n": 2}')),
            calls(("echo", '{"n": 3}'), ("fail", "{}")),
        ]
    )
    tools = Tools()
    reply = turn(model, tools, max_tool_rounds=2)
    assert len(model.requests) == 3 and tools.calls == [("echo", {"n": 1}), ("echo", {"n": 2})]
    assert reply.stop_reason == "max_tool_rounds"
    assert reply.text == MAX_ROUNDS_REPLY.format(n=2) and "limit of 2 rounds" in reply.text
    *executed, skipped_echo, skipped_fail = reply.tool_calls
    assert [c.outcome for c in executed] == ["ok", "ok"]
    assert skipped_echo.outcome == "refused" and skipped_echo.arguments == {"n": 3}
    assert "not executed: the agent reached its limit of 2 tool rounds" in skipped_echo.result
    assert skipped_fail.outcome == "refused"
    # the history stays well formed: every tool call id has its tool message, then a final reply
    ids = [c["id"] for m in reply.messages if m.get("tool_calls") for c in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in reply.messages if m["role"] == "tool"]
    assert ids == answered and reply.messages[-1] == {"role": "assistant", "content": reply.text}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", ({}, None)),
        ("  ", ({}, None)),
        ('{"a": [1]}', ({"a": [1]}, None)),
        ("null", (None, "expected an object, got NoneType")),
    ],
)
def test_parse_arguments(raw: str, expected: tuple[Any, Any]) -> None:
    assert parse_arguments(raw) == expected


def test_a_reply_cut_off_at_the_completion_cap_says_so() -> None:
    cut = ChatResponse(content="Here is the plan: first I", usage=Usage(20, 3, 23, 1), finish_reason="length")
    reply = turn(QueuedModel([cut]), Tools())
    assert reply.stop_reason == "max_tokens" and reply.text == "Here is the plan: first I"
