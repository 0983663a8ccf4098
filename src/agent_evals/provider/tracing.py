"""OpenTelemetry spans of a conversation, for Promptfoo's trace timeline and ``trajectory:*`` checks.

When a suite enables Promptfoo's tracing, the provider gets ``context.traceparent``
(``00-<trace id>-<span id>-01``). A :class:`Tracer` then records the conversation, each turn,
each model call (role, model, tokens) and each tool call (``tool.name``, ``tool.arguments``,
its outcome) and, before the provider answers, posts them as OTLP/JSON to the receiver
(``otlp_endpoint`` in the provider config, else ``AGENT_EVALS_OTLP_ENDPOINT``, else
``http://127.0.0.1:4318/v1/traces``, Promptfoo's default port). Promptfoo's trajectory
assertions read only spans that arrived before the row was graded, so posting happens before
returning; a receiver still starting is waited for a few seconds. A receiver that is down
costs one warning; the row is unaffected. Without a
``traceparent`` nothing is recorded or sent.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_evals.record import RunRecord, ToolCall, Usage
from agent_evals.record.caps import cap_text

log = logging.getLogger(__name__)
ENDPOINT_ENV = "AGENT_EVALS_OTLP_ENDPOINT"
DEFAULT_ENDPOINT = "http://127.0.0.1:4318/v1/traces"
POST_TIMEOUT_S = 2.0
STARTUP_WAIT_S = 5.0
_warned = False  # the one warning of this worker was given
_reached = False  # this worker reached the receiver once


@dataclass
class Span:
    name: str
    span_id: str
    parent_id: str
    start_ns: int
    end_ns: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)
    error: bool = False

    def to_otlp(self, trace_id: str) -> dict[str, Any]:
        return {
            "traceId": trace_id,
            "spanId": self.span_id,
            "parentSpanId": self.parent_id,
            "name": self.name,
            "kind": 1,
            "startTimeUnixNano": str(self.start_ns),
            "endTimeUnixNano": str(self.end_ns or self.start_ns),
            "attributes": [_attribute(k, v) for k, v in self.attributes.items() if v is not None],
            "status": {"code": 2 if self.error else 1},
        }


def _attribute(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value if isinstance(value, str) else json.dumps(value)}}


def _new_id() -> str:
    return secrets.token_hex(8)


def parse_traceparent(value: Any) -> tuple[str, str] | None:
    """``(trace id, parent span id)`` of a W3C ``traceparent``, or None."""
    parts = str(value or "").split("-")
    if len(parts) != 4 or len(parts[1]) != 32 or len(parts[2]) != 16:
        return None
    return parts[1], parts[2]


class Tracer:
    """Collects the spans of one conversation and posts them once (see the module docstring)."""

    def __init__(self, trace_id: str, parent_id: str, endpoint: str, case_id: str) -> None:
        self.trace_id = trace_id
        self.endpoint = endpoint
        self.root = Span(f"conversation {case_id}", _new_id(), parent_id, time.time_ns(), attributes={"case.id": case_id})
        self.spans: list[Span] = [self.root]
        self._turn: Span | None = None

    @classmethod
    def from_context(cls, context: Mapping[str, Any], endpoint: str | None, case_id: str) -> Tracer | None:
        ids = parse_traceparent(context.get("traceparent"))
        if ids is None:
            return None
        return cls(ids[0], ids[1], endpoint or os.environ.get(ENDPOINT_ENV) or DEFAULT_ENDPOINT, case_id)

    # -- what the conversation reports -------------------------------------------------------
    def turn_started(self, number: int, text: str) -> None:
        self.turn_ended()
        self._turn = Span(f"turn {number}", _new_id(), self.root.span_id, time.time_ns(), attributes={"turn": number})
        self.spans.append(self._turn)

    def turn_ended(self, *_: Any) -> None:
        if self._turn is not None and not self._turn.end_ns:
            self._turn.end_ns = time.time_ns()
        self._turn = None

    def model_call(self, role: str, model: str, started_ns: int, usage: Usage, error: bool = False) -> None:
        parent = self._turn.span_id if self._turn is not None and role == "agent" else self.root.span_id
        self.spans.append(Span("llm chat", _new_id(), parent, started_ns, time.time_ns(), {
            "agent_evals.role": role, "gen_ai.request.model": model,
            "gen_ai.usage.input_tokens": usage.prompt_tokens, "gen_ai.usage.output_tokens": usage.completion_tokens,
        }, error))

    def tool_call(self, call: ToolCall) -> None:
        end = time.time_ns()
        parent = self._turn.span_id if self._turn is not None else self.root.span_id
        arguments = cap_text(json.dumps(call.arguments) if call.arguments is not None else call.raw_arguments)
        self.spans.append(Span(f"tool {call.name}", _new_id(), parent, end - int(call.duration_ms * 1e6), end, {
            "tool.name": call.name, "tool.arguments": arguments, "tool.outcome": call.outcome, "turn": call.turn,
        }, call.is_error))

    # -- the end -------------------------------------------------------------------------------
    def finish(self, record: RunRecord) -> None:
        self.turn_ended()
        self.root.end_ns = time.time_ns()
        end = record.end
        self.root.attributes.update({
            "conversation.end": end.reason if end else None, "conversation.ended_by": end.by if end else None,
            "conversation.turns": record.user_messages_sent, "error.kind": end.error_kind if end else None,
        })
        self.root.error = end is not None and end.reason == "error"
        self.post()

    def payload(self) -> dict[str, Any]:
        return {"resourceSpans": [{
            "resource": {"attributes": [_attribute("service.name", "agent-evals")]},
            "scopeSpans": [{"scope": {"name": "agent_evals"}, "spans": [s.to_otlp(self.trace_id) for s in self.spans]}],
        }]}

    def post(self) -> bool:
        """Send the spans. Promptfoo starts its receiver as the eval starts, so a worker's first rows may
        come before it listens: until this worker has reached it once, a refused connection is tried again
        for up to ``STARTUP_WAIT_S``. After that, and once it failed for good, one try each."""
        global _warned, _reached
        body = json.dumps(self.payload()).encode()
        waited, delay = 0.0, 0.05
        while True:
            try:
                self._send(body)
                _reached = True
                return True
            except (urllib.error.URLError, OSError) as exc:
                refused = isinstance(getattr(exc, "reason", exc), ConnectionRefusedError)
                if refused and not _reached and not _warned and waited < STARTUP_WAIT_S:
                    time.sleep(delay)
                    waited, delay = waited + delay, min(delay * 2, 0.5)
                    continue
                if not _warned:
                    log.warning("tracing: could not send spans to %s (%s); the rows are not affected", self.endpoint, exc)
                    _warned = True
                return False

    def _send(self, body: bytes) -> None:
        request = urllib.request.Request(self.endpoint, data=body, headers={"Content-Type": "application/json"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=POST_TIMEOUT_S) as response:
            response.read()
