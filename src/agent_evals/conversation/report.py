"""A run record as Promptfoo sees it: the readable output text and the token usage."""

from __future__ import annotations

import json
from typing import Any

from agent_evals.record import RunRecord, ToolCall, Usage

_ARG_PREVIEW = 160


def _short(value: Any, limit: int = _ARG_PREVIEW) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call_line(call: ToolCall) -> str:
    args = _short(call.arguments) if call.arguments is not None else f"<unparsable: {_short(call.raw_arguments, 60)}>"
    outcome = "ok" if not call.is_error else f"{call.outcome}: " + _short(call.result, 120)
    return f"  [tool] {call.name}({args}) -> {outcome}"


def render_output(record: RunRecord, *, single_turn: bool = False) -> str:
    """User / Assistant turns, tool calls marked, the final reply last.

    A single-turn answer is the reply alone: the prompt is the question, the tool calls
    are in the metadata, and checks of the answer's content see only the answer.
    """
    end = record.end
    error = [f"[error ({end.error_kind}): {end.error}]"] if end is not None and end.reason == "error" else []
    if single_turn:
        return "\n".join([record.final_reply, *error]).strip()
    lines: list[str] = []
    for turn in [*record.turns, *([record.pending] if record.pending else [])]:
        lines.append(f"User: {turn.user}")
        lines.extend(_call_line(c) for c in turn.tool_calls)
        lines.append(f"Assistant: {_reply(turn.assistant)}")
        lines.append("")
    lines.append(f"[conversation ended: {end.reason if end else 'unknown'}]")
    lines.extend(error)
    return "\n".join(lines).strip()


def _reply(text: str | None) -> str:
    if text is None:
        return "(no reply)"
    return text if text.strip() else "(empty reply)"


def token_usage(total: Usage) -> dict[str, int]:
    """Promptfoo's ``tokenUsage`` shape."""
    return {
        "total": total.total_tokens,
        "prompt": total.prompt_tokens,
        "completion": total.completion_tokens,
        "numRequests": total.calls,
    }
