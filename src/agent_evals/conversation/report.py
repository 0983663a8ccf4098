"""A conversation record as Promptfoo sees it: readable output text and the metadata contract."""

from __future__ import annotations

import json
from typing import Any

from agent_evals.agent.types import ToolCall
from agent_evals.contract import (
    CONTRACT_VERSION,
    PROVIDER_MARKER_KEY,
    AgentInfo,
    RunMetadata,
    ToolCallRecord,
    TranscriptEntry,
)
from agent_evals.conversation.driver import ConversationRecord
from agent_evals.llm.types import Usage

_ARG_PREVIEW = 160


def _short(value: Any, limit: int = _ARG_PREVIEW) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call_line(call: ToolCall) -> str:
    args = _short(call.arguments) if call.arguments is not None else f"<unparsable: {_short(call.raw_arguments, 60)}>"
    outcome = "error: " + _short(call.result, 120) if call.is_error else "ok"
    return f"  [tool] {call.name}({args}) -> {outcome}"


def render_output(record: ConversationRecord, *, single_turn: bool = False) -> str:
    """User / Assistant turns, tool calls marked, the final reply last.

    A single-turn answer is the reply alone: the prompt is the question, the tool calls
    are in the metadata, and checks of the answer's content see only the answer.
    """
    if single_turn:
        return "\n".join([record.final_reply, *([f"[error: {record.error}]"] if record.error else [])]).strip()
    lines: list[str] = []
    for turn in record.turns:
        lines.append(f"User: {turn.user}")
        lines.extend(_call_line(c) for c in turn.tool_calls)
        lines.append(f"Assistant: {turn.assistant}")
        lines.append("")
    if record.pending_user_message is not None:
        lines.append(f"User: {record.pending_user_message}")
        lines.extend(_call_line(c) for t, c in record.tool_calls if t > len(record.turns))
        lines.append("Assistant: (no reply)")
        lines.append("")
    lines.append(f"[conversation ended: {record.end or 'unknown'}]")
    if record.error:
        lines.append(f"[error: {record.error}]")
    return "\n".join(lines).strip()


def tool_call_records(record: ConversationRecord) -> list[ToolCallRecord]:
    return [
        {
            "name": c.name,
            "arguments": c.arguments,
            "raw_arguments": c.raw_arguments,
            "result": c.result,
            "is_error": c.is_error,
            "turn": turn,
        }
        for turn, c in record.tool_calls
    ]


def transcript(record: ConversationRecord) -> list[TranscriptEntry]:
    entries: list[TranscriptEntry] = []
    for number, turn in enumerate(record.turns, start=1):
        entries.append({"role": "user", "content": turn.user, "turn": number, "tool_calls": []})
        entries.append(
            {
                "role": "assistant",
                "content": turn.assistant,
                "turn": number,
                "tool_calls": [c.name for c in turn.tool_calls],
            }
        )
    if record.pending_user_message is not None:
        entries.append(
            {"role": "user", "content": record.pending_user_message, "turn": len(record.turns) + 1, "tool_calls": []}
        )
    return entries


def build_metadata(
    record: ConversationRecord, agent: AgentInfo, user_usage: Usage, *, case_id: str | None = None
) -> RunMetadata:
    metadata: RunMetadata = {
        PROVIDER_MARKER_KEY: CONTRACT_VERSION,  # type: ignore[misc]
        "tool_calls": tool_call_records(record),
        "transcript": transcript(record),
        "pull_requests": [{"id": p["id"], "url": p["url"]} for p in record.pull_requests],
        "turns": record.user_messages_sent,
        "conversation_end": record.end or "error",
        "final_reply": record.final_reply,
        "agent": agent,
        "usage": {"agent": record.agent_usage.as_dict(), "user": user_usage.as_dict()},
    }
    if case_id:
        metadata["case_id"] = case_id
    if record.error:
        metadata["error"] = record.error
    return metadata


def token_usage(total: Usage) -> dict[str, int]:
    """Promptfoo's ``tokenUsage`` shape."""
    return {
        "total": total.total_tokens,
        "prompt": total.prompt_tokens,
        "completion": total.completion_tokens,
        "numRequests": total.calls,
    }
