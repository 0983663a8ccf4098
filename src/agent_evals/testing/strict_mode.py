"""Strict mode of the scripted server: behave like the picky OpenAI-compatible servers.

Measured on llama-cpp-python's server 0.3.36 (``docs/llm.md``, real-model smoke test).
With ``ScriptedOpenAIServer(responder, strict=True)``:

* **tools are dropped unless ``tool_choice`` is sent** (``auto``, ``required`` or a named
  tool; ``none`` drops them too): the responder sees ``request.tools is None``. A scripted
  reply with tool calls to a request whose tools were dropped answers HTTP 500 (no retry),
  because a real model could not have called a tool it was never shown;
* **request validation as HTTP 500** (that server wraps every error in a 500, never a 422),
  in its words: ``content`` that is not a string (null, a list of parts, missing on an
  assistant message), a tool call without ``type``, a tool without ``parameters``, the
  ``developer`` role, a tool result with null content;
* **``max_tokens`` is honoured** (0 and negative mean no cap, as there;
  ``max_completion_tokens`` is ignored, as there): a text longer than about
  ``max_tokens * 4`` characters is cut there with ``finish_reason: "length"`` and
  ``completion_tokens == max_tokens``; a tool call's arguments are cut the same way.

:meth:`Reply.runaway` (in any mode) is a model that does not stop: it generates until
``max_tokens``, or a long fixed number of tokens when there is no cap.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from agent_evals.testing.scripted_replies import CHARS_PER_TOKEN, Reply

_NO_RETRY = {"x-should-retry": "false"}
_STRING_ROLES = ("system", "user", "assistant")


def visible_tools(body: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The tools the model is shown: none unless a ``tool_choice`` other than ``none`` was sent."""
    tools = body.get("tools")
    choice = body.get("tool_choice")
    if not isinstance(tools, list) or choice is None or choice == "none":
        return None
    return tools


def cap_of(body: Mapping[str, Any]) -> int | None:
    """The ``max_tokens`` a llama.cpp-like server honours: a positive whole number, else none."""
    value = body.get("max_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def rejection(body: Mapping[str, Any]) -> Reply | None:
    """HTTP 500 in the server's words for a request it refuses, else None."""
    problems = [*_message_problems(body.get("messages") or []), *_tool_problems(body.get("tools"))]
    if not problems:
        return None
    return _server_error(problems[0])


def dropped_tool_calls(body: Mapping[str, Any], reply: Reply) -> Reply | None:
    """HTTP 500 when ``reply`` calls tools the strict server did not show the model."""
    if reply.message is None or not reply.message.get("tool_calls") or visible_tools(body) is not None:
        return None
    sent = "tools but no tool_choice" if body.get("tools") else "no tools"
    return Reply.error(
        500,
        f"strict ScriptedOpenAIServer: the script answers with tool calls, but the request sent {sent}, "
        "so a llama.cpp-like server showed the model no tools",
        headers=_NO_RETRY,
    )


def capped(reply: Reply, cap: int | None) -> Reply:
    """``reply`` cut at ``cap`` tokens (about ``cap * 4`` characters), finish_reason ``length``."""
    if cap is None or reply.message is None:
        return reply
    limit = cap * CHARS_PER_TOKEN
    message = dict(reply.message)
    content = message.get("content")
    calls = message.get("tool_calls") or []
    size = len(content or "") + sum(len(c["function"]["arguments"]) for c in calls)
    if size <= limit:
        return reply
    if calls:
        message["tool_calls"] = _cut_calls(calls, limit)
    else:
        message["content"] = (content or "")[:limit]
    return replace(reply, message=message, finish_reason="length", usage=_usage_with_completion(reply.usage, cap))


def _cut_calls(calls: Sequence[Mapping[str, Any]], limit: int) -> list[dict[str, Any]]:
    cut: list[dict[str, Any]] = []
    for call in calls:
        if limit <= 0:
            break
        arguments = call["function"]["arguments"]
        cut.append({**call, "function": {**call["function"], "arguments": arguments[:limit]}})
        limit -= len(arguments)
    return cut


def _usage_with_completion(usage: Mapping[str, int] | None, completion: int) -> dict[str, int]:
    """The scripted usage with ``completion`` tokens (the server adds what is missing and the total)."""
    kept = {k: v for k, v in (usage or {}).items() if k == "prompt_tokens"}
    return {**kept, "completion_tokens": completion}


def _message_problems(messages: Sequence[Any]) -> list[str]:
    problems: list[str] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            problems.append(_validation(index, "", "dict_type", "Input should be a valid dictionary", message))
            continue
        problems.extend(_one_message_problems(index, message))
    return problems


def _one_message_problems(index: int, message: Mapping[str, Any]) -> list[str]:
    role = message.get("role")
    if role == "developer":
        return [_validation(index, "role", "literal_error", "Input should be 'system'", role)]
    if role == "tool":
        if not isinstance(message.get("content"), str):
            return [f'can only concatenate str (not "{type(message.get("content")).__name__}") to str']
        return []
    if role in _STRING_ROLES and "content" not in message:
        return ["'dict object' has no attribute 'content'"]
    problems = []
    content = message.get("content")
    if role in _STRING_ROLES and not isinstance(content, str):
        problems.append(_validation(index, "content", "string_type", "Input should be a valid string", content))
    for position, call in enumerate(message.get("tool_calls") or []):
        if not isinstance(call, Mapping) or call.get("type") != "function":
            where = f"tool_calls', {position}, 'type"
            problems.append(_validation(index, where, "missing", "Field required", call))
    return problems


def _tool_problems(tools: Any) -> list[str]:
    if not isinstance(tools, list):
        return []
    problems = []
    for index, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("parameters"), Mapping):
            problems.append(
                f"1 validation error:\n  {{'type': 'missing', 'loc': ('body', 'tools', {index}, 'function', "
                f"'parameters'), 'msg': 'Field required', 'input': {tool!r}}}"
            )
    return problems


def _validation(index: int, field: str, kind: str, msg: str, value: Any) -> str:
    """One pydantic-style validation error, as llama-cpp-python's server words it."""
    loc = f"('body', 'messages', {index}, 'ChatCompletionRequestMessage'" + (f", '{field}')" if field else ")")
    return f"1 validation error:\n  {{'type': '{kind}', 'loc': {loc}, 'msg': {msg!r}, 'input': {json.dumps(value)}}}"


def _server_error(message: str) -> Reply:
    body = {"error": {"message": message, "type": "internal_server_error", "param": None, "code": None}}
    return Reply.error(500, body)
