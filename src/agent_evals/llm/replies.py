"""Turn a chat completion body into a :class:`~agent_evals.llm.types.ChatResponse`.

The body is what the server sent (:mod:`agent_evals.llm.chat_http`), unvalidated, so it may
be anything: a plain string (non-JSON content type), a list, an object without ``choices``…
Every field is read defensively; what cannot be a chat answer raises :class:`UnusableReplyError`
with a message saying what was missing.

Tool-call arguments are kept exactly as the model sent them (malformed JSON included:
the agent loop reports those back to the model), with one repair: arguments that are
not JSON but become JSON once HTML entities are decoded (``{&quot;name&quot;: …}``; llama.cpp's
``chatml-function-calling`` template HTML-escapes earlier calls, and small models copy
it) are decoded; anything else is left alone, so text that merely contains ``&amp;`` inside
valid JSON is never touched. A server that sends the arguments as a JSON object instead of
a string gets them re-encoded. ``finish_reason`` is kept as sent, also a value this kit
does not know (only ``length`` and ``tool_calls`` mean something to the agent loop). Missing tool-call ids are filled in as
``call_<index>`` (some local servers omit them, and tool results must refer to one).
A refusal (``message.refusal``) with no content becomes the content.
"""

from __future__ import annotations

import html
import json
import logging
from typing import Any

from agent_evals.llm.pricing import PriceTable
from agent_evals.llm.types import ChatResponse, ToolCall, Usage

_PREVIEW_CHARS = 80
log = logging.getLogger(__name__)


class UnusableReplyError(ValueError):
    """The server answered, but not with a usable chat completion."""


def to_chat_response(completion: Any, *, requested_model: str, prices: PriceTable) -> ChatResponse:
    """Convert ``completion`` (the parsed body) to a ChatResponse with usage and cost."""
    message, finish_reason = _first_message(completion)
    reported_model = completion.get("model")
    model = reported_model if isinstance(reported_model, str) and reported_model else requested_model
    content = message.get("content")
    if content is None:
        refusal = message.get("refusal")
        content = refusal if isinstance(refusal, str) and refusal else None
    if content is not None and not isinstance(content, str):
        raise UnusableReplyError(f"message content is a {type(content).__name__}, not text")
    usage = _usage(completion.get("usage"))
    cost = prices.cost(usage.prompt_tokens, usage.completion_tokens, requested_model, model)
    return ChatResponse(
        content=content,
        tool_calls=_tool_calls(message.get("tool_calls")),
        usage=Usage(usage.prompt_tokens, usage.completion_tokens, usage.total_tokens, calls=1, cost=cost),
        model=model,
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
    )


def _first_message(completion: Any) -> tuple[dict[str, Any], Any]:
    if not isinstance(completion, dict):
        raise UnusableReplyError(f"the body is not a chat completion object: {_preview(completion)}")
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices:
        raise UnusableReplyError(f"no choices in the reply (choices={_preview(choices)})")
    message = _field(choices[0], "message")
    if not isinstance(message, dict):
        raise UnusableReplyError(f"the first choice has no message (message={_preview(message)})")
    return message, _field(choices[0], "finish_reason")


def _tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise UnusableReplyError(f"tool_calls is a {type(raw).__name__}, not a list")
    calls = []
    for index, call in enumerate(raw):
        function = _field(call, "function") or _field(call, "custom")
        name = _field(function, "name")
        if not isinstance(name, str) or not name:
            raise UnusableReplyError(f"tool call {index} has no function name")
        arguments = _field(function, "arguments")
        if arguments is None:
            arguments = _field(function, "input")
        call_id = _field(call, "id")
        calls.append(
            ToolCall.request(
                call_id if isinstance(call_id, str) and call_id else f"call_{index}",
                name,
                _raw_arguments(arguments),
            )
        )
    return tuple(calls)


def _field(value: Any, name: str) -> Any:
    """``value[name]`` when ``value`` is a JSON object, else None."""
    return value.get(name) if isinstance(value, dict) else None


def _raw_arguments(arguments: Any) -> str:
    """The arguments text as sent (HTML entities decoded only when that makes it JSON);
    a server that sends a JSON object gets it re-encoded."""
    if isinstance(arguments, str):
        return unescape_if_json(arguments)
    if isinstance(arguments, dict | list):
        return json.dumps(arguments)
    return ""


def unescape_if_json(text: str) -> str:
    """``text`` with HTML entities decoded, but only if it is not JSON and the decoded text is."""
    if "&" not in text or _is_json(text):
        return text
    decoded = html.unescape(text)
    if decoded == text or not _is_json(decoded):
        return text
    log.debug("tool-call arguments were HTML-escaped; decoded them")
    return decoded


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _usage(raw: Any) -> Usage:
    prompt = _count(_field(raw, "prompt_tokens"))
    completion = _count(_field(raw, "completion_tokens"))
    total = _count(_field(raw, "total_tokens")) or prompt + completion
    return Usage(prompt, completion, total)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _PREVIEW_CHARS else text[: _PREVIEW_CHARS - 1] + "…"
