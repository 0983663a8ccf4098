"""The chat request the kit sends: one shape every common OpenAI-compatible server accepts.

OpenAI and Azure OpenAI accept a lot; llama.cpp's server (llama-cpp-python, measured: see
``docs/llm.md``) is the pickiest of the common ones, so :func:`build_request` sends what it
needs, which the others accept as well:

* tools: function tools, each with ``parameters`` (an empty object schema when a tool
  declares none), and ``tool_choice`` with them (:data:`ToolChoice`, ``LLM_TOOL_CHOICE``,
  default ``"auto"``): without a ``tool_choice`` that server shows the model no tools;
* messages: ``content`` is always a string: ``""`` for an assistant message that only
  calls tools (``null`` is an HTTP 500 there), a list of text parts joined into one text,
  a missing or null tool result ``""``; the ``developer`` role is sent as ``system``;
* every tool call carries ``type: "function"`` and its arguments as a string;
* the completion cap as ``max_tokens`` (llama.cpp ignores ``max_completion_tokens``; the
  model switches to ``max_completion_tokens`` only for an OpenAI model that refuses
  ``max_tokens``, see :mod:`agent_evals.llm.openai_chat`).

The caller's messages are not changed: normalised copies are sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

from agent_evals.llm.types import Message, ToolSpec
from agent_evals.record import is_one_of

ToolChoice = Literal["auto", "required", "none", "omit"]
"""What to send as ``tool_choice`` when tools are offered (``omit``: send none)."""
TOOL_CHOICES: tuple[ToolChoice, ...] = get_args(ToolChoice)
DEFAULT_TOOL_CHOICE: ToolChoice = "auto"

CapParameter = Literal["max_tokens", "max_completion_tokens"]
EMPTY_PARAMETERS: Mapping[str, Any] = {"type": "object", "properties": {}}


def check_tool_choice(value: str) -> ToolChoice:
    """``value`` if it is one of :data:`TOOL_CHOICES`, else ValueError naming the allowed set."""
    if not is_one_of(value, TOOL_CHOICES):
        raise ValueError(f"tool_choice must be one of {', '.join(TOOL_CHOICES)}, got {value!r}")
    return value


def build_request(
    model: str,
    messages: Sequence[Message],
    *,
    tools: Sequence[ToolSpec] | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    tool_choice: ToolChoice = DEFAULT_TOOL_CHOICE,
    cap_parameter: CapParameter = "max_tokens",
) -> dict[str, Any]:
    """The ``chat.completions.create`` keyword arguments (see the module docstring)."""
    request: dict[str, Any] = {"model": model, "messages": [normalize_message(m) for m in messages]}
    if tools:  # an empty tools list is rejected by OpenAI, so send none
        request["tools"] = [normalize_tool(t) for t in tools]
        if tool_choice != "omit":
            request["tool_choice"] = tool_choice
    if temperature is not None:
        request["temperature"] = temperature
    if max_tokens is not None:
        request[cap_parameter] = max_tokens
    return request


def normalize_message(message: Message) -> Message:
    """A copy of ``message`` with string content and typed tool calls."""
    normalized = dict(message)
    if normalized.get("role") == "developer":
        normalized["role"] = "system"
    normalized["content"] = _text(normalized.get("content"))
    calls = normalized.get("tool_calls")
    if isinstance(calls, list) and calls:
        normalized["tool_calls"] = [_tool_call(c) for c in calls]
    elif "tool_calls" in normalized:
        del normalized["tool_calls"]  # an empty or null list: some servers reject it
    return normalized


def normalize_tool(tool: ToolSpec) -> ToolSpec:
    """A function tool with ``type`` and ``parameters`` set."""
    function = dict(tool.get("function") or {})
    if not isinstance(function.get("parameters"), Mapping):
        function["parameters"] = dict(EMPTY_PARAMETERS)
    return {**tool, "type": tool.get("type") or "function", "function": function}


def _tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
    function = dict(call.get("function") or {})
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        function["arguments"] = "" if arguments is None else json.dumps(arguments)
    return {**call, "type": call.get("type") or "function", "function": function}


def _text(content: Any) -> Any:
    """String content: None → ``""``, a list of text parts → their text joined.

    A list with other parts (images) is left as it is: only a server that reads them can use it.
    """
    if content is None:
        return ""
    if isinstance(content, list) and all(_is_text_part(p) for p in content):
        return "".join(str(p.get("text", "")) for p in content)
    return content


def _is_text_part(part: Any) -> bool:
    return isinstance(part, Mapping) and part.get("type") == "text"
