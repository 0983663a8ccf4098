"""A run record as people read it: the row's output text, and Promptfoo's token usage.

Each tool call is one line with a short result that says what happened
(``-> invalid: /name: does not match the file name rule``, ``-> PR #7 active, validation
succeeded``, ``-> error: unknown item 'x'``), short scalar arguments first and large values
summarized, so a 15-turn conversation stays readable; the end and who ended it come last.
A single-turn row shows its tool lines, then the answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agent_evals.record import RunRecord, ToolCall, Turn, Usage

_SCALAR = 60  # a string argument longer than this is cut
_RESULT = 100  # the longest result summary


def render_output(record: RunRecord, *, single_turn: bool = False) -> str:
    """User / Assistant turns with their tool lines; the end last (see the module docstring)."""
    if single_turn:
        return _single(record)
    lines: list[str] = []
    for turn in [*record.turns, *([record.pending] if record.pending else [])]:
        lines.append(f"User: {turn.user}")
        lines.extend(tool_line(c) for c in turn.tool_calls)
        lines.append(f"Assistant: {_reply(turn.assistant)}")
        lines.append("")
    lines.append(ending(record))
    return "\n".join(lines).strip()


def _single(record: RunRecord) -> str:
    turn: Turn | None = record.turns[-1] if record.turns else record.pending
    lines = [tool_line(c) for c in turn.tool_calls] if turn is not None else []
    lines.append(record.final_reply if record.turns else _reply(None))
    if record.end is not None and record.end.reason == "error":
        lines.append(ending(record))
    return "\n".join(lines).rstrip()


def ending(record: RunRecord) -> str:
    end = record.end
    if end is None:
        return "[conversation ended: unknown]"
    if end.reason == "error":
        return f"[conversation ended: error ({end.error_kind}): {end.error}]"
    return f"[conversation ended: {end.reason}, by the {end.by}]"


def _reply(text: str | None) -> str:
    if text is None:
        return "(no reply)"
    return text if text.strip() else "(empty reply)"


def tool_line(call: ToolCall) -> str:
    return f"  [tool] {call.name}({arguments_text(call)}) -> {result_text(call)}"


def arguments_text(call: ToolCall) -> str:
    """``name="billing-eu", config={…14 keys}``: short scalars first, large values summarized."""
    if call.arguments is None:
        return f"<not a JSON object: {_cut(call.raw_arguments, 40)}>"
    items = sorted(call.arguments.items(), key=lambda kv: not _is_short(kv[1]))
    return ", ".join(f"{key}={_value(value)}" for key, value in items)


def _is_short(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float) or (isinstance(value, str) and len(value) <= _SCALAR)


def _value(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(_cut(value, _SCALAR), ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{}" if not value else f"{{…{len(value)} keys}}"
    if isinstance(value, list):
        return "[]" if not value else f"[…{len(value)} items]"
    return json.dumps(value)


def result_text(call: ToolCall) -> str:
    """What came of a call, in a few words (its typed outcome first)."""
    if call.outcome == "refused":
        return "refused: " + _cut(_text(call.result).split(";")[0], _RESULT)
    if call.outcome == "invalid_arguments":
        return "not run: the arguments were not a JSON object"
    if call.outcome == "tool_error":
        return "error: " + _cut(_error_text(_text(call.result), call.name), _RESULT)
    if call.outcome is None:
        return "not run"
    return _cut(_ok_text(call.result), _RESULT)


def _ok_text(result: Any) -> str:
    if isinstance(result, Mapping):
        if "valid" in result:
            return "valid" if result.get("valid") else "invalid: " + _errors(result.get("errors"))
        if "id" in result and "status" in result:
            label = "PR #" if "pullrequest" in str(result.get("url") or "") else "#"
            extra = f", validation {result['validation_status']}" if result.get("validation_status") else ""
            return f"{label}{result['id']} {result['status']}{extra}"
        lists = [(k, v) for k, v in result.items() if isinstance(v, list)]
        if len(lists) == 1 and len(result) <= 3:
            key, items = lists[0]
            return f"{len(items)} {key}"
        if isinstance(result.get("name"), str):
            return f"ok: {result['name']}"
        return f"ok ({len(result)} fields)"
    if isinstance(result, list):
        return f"{len(result)} items"
    if result is None or result == "":
        return "ok"
    return "ok: " + _text(result)


def _errors(errors: Any) -> str:
    if not isinstance(errors, list) or not errors:
        return "no reason given"
    first = errors[0]
    text = f"{first.get('path') or '/'}: {first.get('message')}" if isinstance(first, Mapping) else str(first)
    return text + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")


def _error_text(text: str, name: str) -> str:
    for prefix in (f"Error executing tool {name}: ", "Error: ", "Error "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return " ".join(text.split())


def _cut(text: str, limit: int) -> str:
    text = text if isinstance(text, str) else str(text)
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def token_usage(total: Usage) -> dict[str, int]:
    """Promptfoo's ``tokenUsage`` shape."""
    return {
        "total": total.total_tokens,
        "prompt": total.prompt_tokens,
        "completion": total.completion_tokens,
        "numRequests": total.calls,
    }
