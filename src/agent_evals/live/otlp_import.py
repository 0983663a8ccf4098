"""Conversations from OpenTelemetry traces in the GenAI conventions (OTLP/JSON), so an agent
instrumented elsewhere can be scored too.

Input: OTLP/JSON export requests (``{"resourceSpans": [...]}``, one per line as the collector's
file exporter writes them). Spans are grouped by ``gen_ai.conversation.id`` (else by trace);
each ``invoke_agent`` span is a turn, the ``chat`` and ``execute_tool`` spans under it (in time
order) its model calls and tool calls:

* the user's message: the last user message of the turn's first ``chat`` span
  (``gen_ai.input.messages``), the reply: the text of its last ``chat`` span's
  ``gen_ai.output.messages`` — so the transcript needs message content captured; without it
  the turns have no text and only the tool checks mean anything;
* each tool call: ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments``
  and ``.result`` when captured, outcome ``tool_error`` when the span has ``error.type``;
* the agent: ``gen_ai.agent.name``, ``gen_ai.request.model``, ``gen_ai.request.temperature``;
  usage: the ``chat`` spans' ``gen_ai.usage.*`` tokens; the end: an ``invoke_agent`` span with an
  error status ends the conversation in an error (its ``error.type`` when it is a kit kind, else
  ``model``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from agent_evals.live.stored import StoredConversation
from agent_evals.record import ERROR_KINDS, STOP_REASONS, AgentInfo, End, RunRecord, ToolCall, Turn, Usage, UserInfo, one_of

_ERROR = 2  # OTLP status code


def spans_of(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The spans of one OTLP/JSON export request, each with its attributes as a plain dict."""
    out = []
    for resource in document.get("resourceSpans") or ():
        for scope in resource.get("scopeSpans") or ():
            for span in scope.get("spans") or ():
                out.append({
                    "name": str(span.get("name") or ""), "trace_id": str(span.get("traceId") or ""),
                    "span_id": str(span.get("spanId") or ""), "parent_id": str(span.get("parentSpanId") or ""),
                    "start": int(span.get("startTimeUnixNano") or 0), "end": int(span.get("endTimeUnixNano") or 0),
                    "attributes": {a["key"]: _value(a.get("value") or {}) for a in span.get("attributes") or ()},
                    "error": (span.get("status") or {}).get("code") in (_ERROR, "STATUS_CODE_ERROR"),
                    "message": (span.get("status") or {}).get("message") or "",
                })
    return out


def _value(value: Mapping[str, Any]) -> Any:
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_value(v) for v in value["arrayValue"].get("values") or ()]
    return None


def conversations_from_spans(spans: Iterable[Mapping[str, Any]]) -> list[StoredConversation]:
    """One conversation per conversation id (or trace), oldest first."""
    spans = list(spans)
    turns = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "invoke_agent"]
    children: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for span in spans:
        children[span["parent_id"]].append(span)
    by_conversation: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for turn in turns:
        by_conversation[str(turn["attributes"].get("gen_ai.conversation.id") or turn["trace_id"])].append(turn)
    found = [_conversation(cid, sorted(items, key=lambda s: s["start"]), children) for cid, items in by_conversation.items()]
    return sorted(found, key=lambda c: (c.created_at, c.id))


def _conversation(cid: str, turns: list[Mapping[str, Any]], children: Mapping[str, list[Mapping[str, Any]]]) -> StoredConversation:
    first = turns[0]["attributes"]
    temperature = first.get("gen_ai.request.temperature")
    agent = AgentInfo(str(first.get("gen_ai.agent.name") or ""), str(first.get("gen_ai.request.model") or ""),
                      float(temperature) if isinstance(temperature, int | float) else None,
                      str(first.get("agent_evals.instructions_sha256") or ""))
    record = RunRecord(case_id=cid, agent=agent, user=UserInfo(kind="human"))
    end: End = End("done")
    for number, span in enumerate(turns, start=1):
        inner = sorted(_descendants(span, children), key=lambda s: s["start"])
        chats = [s for s in inner if s["attributes"].get("gen_ai.operation.name") == "chat"]
        tools = [s for s in inner if s["attributes"].get("gen_ai.operation.name") == "execute_tool"]
        calls = record.place([_tool_call(s) for s in tools], number)
        for chat in chats:
            record.add_usage("agent", Usage(*_tokens(chat), calls=1))
        user = _last_user_text(chats[0]) if chats else ""
        if span["error"]:
            record.pending = Turn(user, None, calls)
            kind = span["attributes"].get("error.type")
            end = End.failed(one_of(kind, ERROR_KINDS, "model"), span["message"] or f"the turn failed ({kind})")
            break
        stop = one_of(span["attributes"].get("agent_evals.stop_reason"), STOP_REASONS, "reply")
        record.turns.append(Turn(user, _reply_text(chats[-1]) if chats else "", calls, stop))
        end = End(stop) if stop != "reply" else End("done")
    record.end = end
    started = turns[0]["start"] / 1e9
    ended = max(s["end"] for s in turns) / 1e9
    stored = StoredConversation(cid, "", agent, started, ended, record)
    stored.status = "error" if end.reason == "error" else "open"
    return stored


def _descendants(span: Mapping[str, Any], children: Mapping[str, list[Mapping[str, Any]]]) -> list[Mapping[str, Any]]:
    out, stack = [], list(children.get(span["span_id"], ()))
    while stack:
        item = stack.pop()
        out.append(item)
        stack.extend(children.get(item["span_id"], ()))
    return out


def _tokens(span: Mapping[str, Any]) -> tuple[int, int, int]:
    prompt = int(span["attributes"].get("gen_ai.usage.input_tokens") or 0)
    completion = int(span["attributes"].get("gen_ai.usage.output_tokens") or 0)
    return prompt, completion, prompt + completion


def _tool_call(span: Mapping[str, Any]) -> ToolCall:
    attributes = span["attributes"]
    raw = attributes.get("gen_ai.tool.call.arguments")
    raw = raw if isinstance(raw, str) else json.dumps(raw) if raw is not None else ""
    call = ToolCall.request(str(attributes.get("gen_ai.tool.call.id") or span["span_id"]),
                            str(attributes.get("gen_ai.tool.name") or span["name"]), raw)
    result = attributes.get("gen_ai.tool.call.result")
    if isinstance(result, str):
        try:
            result = json.loads(result)
        except ValueError:
            pass
    failed = bool(attributes.get("error.type")) or span["error"]
    return call.with_outcome("tool_error" if failed else "ok", result, (span["end"] - span["start"]) / 1e6)


def _messages(span: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    raw = span["attributes"].get(key)
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return []
    return [m for m in value if isinstance(m, Mapping)] if isinstance(value, list) else []


def _text(message: Mapping[str, Any]) -> str:
    """A message's text: the GenAI conventions' text parts, or an OpenAI-style ``content`` string."""
    if isinstance(message.get("content"), str):
        return message["content"]
    return "".join(str(p.get("content") or "") for p in message.get("parts") or () if p.get("type") == "text")


def _last_user_text(span: Mapping[str, Any]) -> str:
    users = [m for m in _messages(span, "gen_ai.input.messages") if m.get("role") == "user"]
    return _text(users[-1]) if users else ""


def _reply_text(span: Mapping[str, Any]) -> str:
    outputs = _messages(span, "gen_ai.output.messages")
    return _text(outputs[-1]) if outputs else ""
