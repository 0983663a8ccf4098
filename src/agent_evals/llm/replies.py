"""Turn an SDK chat completion into a :class:`~agent_evals.llm.types.ChatResponse`.

The SDK builds its reply objects without validation, so a server may hand us anything:
a plain string (non-JSON content type), a list, an object without ``choices``… Every
field is read defensively; what cannot be a chat answer raises :class:`UnusableReplyError`
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
    """Convert ``completion`` (SDK object) to a ChatResponse with usage and cost."""
    message, finish_reason = _first_message(completion)
    reported_model = getattr(completion, "model", None)
    model = reported_model if isinstance(reported_model, str) and reported_model else requested_model
    content = getattr(message, "content", None)
    if content is None:
        refusal = getattr(message, "refusal", None)
        content = refusal if isinstance(refusal, str) and refusal else None
    if content is not None and not isinstance(content, str):
        raise UnusableReplyError(f"message content is a {type(content).__name__}, not text")
    usage = _usage(getattr(completion, "usage", None))
    cost = prices.cost(usage.prompt_tokens, usage.completion_tokens, requested_model, model)
    return ChatResponse(
        content=content,
        tool_calls=_tool_calls(getattr(message, "tool_calls", None)),
        usage=Usage(usage.prompt_tokens, usage.completion_tokens, usage.total_tokens, calls=1, cost=cost),
        model=model,
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
    )


def _first_message(completion: Any) -> tuple[Any, Any]:
    if isinstance(completion, str | bytes | list | dict) or completion is None:
        raise UnusableReplyError(f"the body is not a chat completion object: {_preview(completion)}")
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise UnusableReplyError(f"no choices in the reply (choices={_preview(choices)})")
    message = getattr(choices[0], "message", None)
    if message is None or isinstance(message, str | list | int | float):
        raise UnusableReplyError(f"the first choice has no message (message={_preview(message)})")
    return message, getattr(choices[0], "finish_reason", None)


def _tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise UnusableReplyError(f"tool_calls is a {type(raw).__name__}, not a list")
    calls = []
    for index, call in enumerate(raw):
        function = getattr(call, "function", None) or getattr(call, "custom", None)
        name = getattr(function, "name", None)
        if not isinstance(name, str) or not name:
            raise UnusableReplyError(f"tool call {index} has no function name")
        arguments = getattr(function, "arguments", None)
        if arguments is None:
            arguments = getattr(function, "input", None)
        call_id = getattr(call, "id", None)
        calls.append(
            ToolCall.request(
                call_id if isinstance(call_id, str) and call_id else f"call_{index}",
                name,
                _raw_arguments(arguments),
            )
        )
    return tuple(calls)


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
    prompt = _count(getattr(raw, "prompt_tokens", None))
    completion = _count(getattr(raw, "completion_tokens", None))
    total = _count(getattr(raw, "total_tokens", None)) or prompt + completion
    return Usage(prompt, completion, total)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _PREVIEW_CHARS else text[: _PREVIEW_CHARS - 1] + "…"
