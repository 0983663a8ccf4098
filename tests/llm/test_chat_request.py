"""The request shape: what every common OpenAI-compatible server accepts (llama.cpp's the pickiest)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agent_evals.llm.chat_request import TOOL_CHOICES, build_request, check_tool_choice, normalize_message

TOOL = {"type": "function", "function": {"name": "get_spoke", "parameters": {"type": "object"}}}
CALL = {"id": "c1", "function": {"name": "get_spoke", "arguments": '{"name": "x"}'}}


@pytest.mark.parametrize(
    ("tool_choice", "sent"),
    [("auto", "auto"), ("required", "required"), ("none", "none"), ("omit", None)],
)
def test_tool_choice_is_sent_with_tools_unless_omitted(tool_choice: Any, sent: str | None) -> None:
    request = build_request("m", [], tools=[TOOL], tool_choice=tool_choice)
    assert request.get("tool_choice") == sent
    assert request["tools"] == [TOOL]


def test_no_tools_no_tool_choice() -> None:
    for tools in (None, []):
        request = build_request("m", [{"role": "user", "content": "hi"}], tools=tools)
        assert "tools" not in request and "tool_choice" not in request


def test_cap_and_temperature_only_when_given_and_under_the_chosen_name() -> None:
    assert build_request("m", []) == {"model": "m", "messages": []}
    assert build_request("m", [], max_tokens=5, temperature=0.0) == {
        "model": "m", "messages": [], "max_tokens": 5, "temperature": 0.0,
    }
    renamed = build_request("m", [], max_tokens=5, cap_parameter="max_completion_tokens")
    assert renamed["max_completion_tokens"] == 5 and "max_tokens" not in renamed


@pytest.mark.parametrize(
    ("message", "sent"),
    [
        pytest.param(
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "assistant", "content": "", "tool_calls": [{**CALL, "type": "function"}]},
            id="null content and untyped tool call",
        ),
        pytest.param({"role": "assistant", "tool_calls": []}, {"role": "assistant", "content": ""}, id="no content, empty calls"),
        pytest.param(
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}]},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
            ]},
            id="object arguments as a string",
        ),
        pytest.param(
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "user", "content": "ab"},
            id="text parts joined",
        ),
        pytest.param({"role": "tool", "tool_call_id": "c", "content": None}, {"role": "tool", "tool_call_id": "c", "content": ""},
                     id="null tool result"),
        pytest.param({"role": "developer", "content": "x"}, {"role": "system", "content": "x"}, id="developer role"),
        pytest.param({"role": "user", "content": "plain"}, {"role": "user", "content": "plain"}, id="unchanged"),
    ],
)
def test_messages_are_normalised(message: dict[str, Any], sent: dict[str, Any]) -> None:
    assert normalize_message(message) == sent


def test_image_parts_are_left_alone_and_the_callers_messages_unchanged() -> None:
    parts = [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": "x"}}]
    messages = [{"role": "user", "content": parts}, {"role": "assistant", "content": None, "tool_calls": [CALL]}]
    before = copy.deepcopy(messages)
    request = build_request("m", messages)
    assert request["messages"][0]["content"] == parts
    assert messages == before


def test_tools_get_type_and_parameters() -> None:
    bare = {"function": {"name": "ping", "description": "no arguments"}}
    [sent] = build_request("m", [], tools=[bare])["tools"]
    assert sent == {"type": "function", "function": {"name": "ping", "description": "no arguments",
                                                      "parameters": {"type": "object", "properties": {}}}}


def test_tool_choice_vocabulary_is_closed() -> None:
    assert TOOL_CHOICES == ("auto", "required", "none", "omit")
    assert check_tool_choice("omit") == "omit"
    with pytest.raises(ValueError, match="tool_choice must be one of auto, required, none, omit, got 'always'"):
        check_tool_choice("always")
