"""Spans of a conversation: posted as OTLP/JSON to the receiver before the provider answers,
linked to the row's traceparent; a receiver that is down costs one warning and nothing else;
no traceparent, no span."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import yaml

from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.provider import tracing
from agent_evals.provider.run import call_api
from agent_evals.suites.files import load_suite
from agent_evals.suites.discovery import select

SUITE = select("integration-qa")[0]
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"


class _Receiver(BaseHTTPRequestHandler):
    posted: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).posted.append(json.loads(body))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    _Receiver.posted = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1/traces", _Receiver.posted
    finally:
        server.shutdown()


@pytest.fixture(autouse=True)
def portal_env(live_portal: PortalProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORTAL_URL", live_portal.url)
    monkeypatch.setenv("PORTAL_TOKEN", live_portal.token or "")
    monkeypatch.setattr(tracing, "_warned", False)
    monkeypatch.setattr(tracing, "_reached", False)


def _call(case_id: str, **context: Any) -> dict[str, Any]:
    test = next(t for t in load_suite(SUITE).tests if t.case_id == case_id)
    case = {"description": test.description, "vars": dict(test.vars), "metadata": dict(test.metadata),
            "assert": [dict(a) for a in test.asserts]}
    config = dict(yaml.safe_load(SUITE.config.read_text())["providers"][0]["config"])
    config.update(replay=str(SUITE.folder / "golden"), basePath=str(SUITE.folder), otlp_endpoint=context.pop("endpoint", None))
    return call_api("", {"config": config}, {"vars": case["vars"], "test": case, "evaluationId": "eval-trace", **context})


def _spans(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for rs in payload["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _attributes(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}


def test_the_spans_of_a_conversation_reach_the_receiver_before_the_answer(receiver) -> None:  # noqa: ANN001
    endpoint, posted = receiver
    answer = _call("I01", traceparent=f"00-{TRACE_ID}-{PARENT}-01", endpoint=endpoint)
    assert "error" not in answer, answer.get("error")
    assert len(posted) == 1  # one post, done before call_api returned
    spans = _spans(posted[0])
    assert {s["traceId"] for s in spans} == {TRACE_ID}
    by_name = {s["name"]: s for s in spans}
    root = by_name["conversation I01"]
    assert root["parentSpanId"] == PARENT and _attributes(root)["conversation.end"] == "done"
    turn = by_name["turn 1"]
    assert turn["parentSpanId"] == root["spanId"]
    tool = by_name["tool get_pull_request"]
    assert tool["parentSpanId"] == turn["spanId"]
    assert _attributes(tool)["tool.name"] == "get_pull_request" and _attributes(tool)["tool.outcome"] == "ok"
    assert json.loads(_attributes(tool)["tool.arguments"]) == {"id": answer["metadata"]["fixtures"][0]["id"]}
    models = [s for s in spans if s["name"] == "llm chat"]
    assert len(models) == 2 and all(_attributes(m)["agent_evals.role"] == "agent" for m in models)
    assert all(int(_attributes(m)["gen_ai.usage.input_tokens"]) > 0 for m in models)
    assert all(int(s["endTimeUnixNano"]) >= int(s["startTimeUnixNano"]) for s in spans)


def test_no_traceparent_no_span(receiver) -> None:  # noqa: ANN001
    endpoint, posted = receiver
    answer = _call("I05", endpoint=endpoint)
    assert "error" not in answer and posted == []


def test_a_receiver_that_is_down_costs_one_warning(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1/traces"  # nothing listens once closed
    caplog.set_level(logging.WARNING, logger="agent_evals.provider.tracing")
    monkeypatch.setattr(tracing, "STARTUP_WAIT_S", 0.3)  # a receiver still starting is waited for; this one never will
    for case in ("I05", "I07"):
        answer = _call(case, traceparent=f"00-{TRACE_ID}-{PARENT}-01", endpoint=closed)
        assert "error" not in answer and all(c["pass"] for c in answer["metadata"]["checks"])
    warnings = [r for r in caplog.records if r.name == "agent_evals.provider.tracing"]
    assert len(warnings) == 1 and "could not send spans" in warnings[0].getMessage()


def test_a_malformed_traceparent_is_ignored() -> None:
    assert tracing.Tracer.from_context({"traceparent": "00-abc-def-01"}, None, "C01") is None
    assert tracing.parse_traceparent(f"00-{TRACE_ID}-{PARENT}-01") == (TRACE_ID, PARENT)
