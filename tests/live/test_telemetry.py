"""The chat path's spans, received for real: a portal process exports them over OTLP/HTTP (and to an
Azure Monitor ingestion endpoint) to receivers in this test, which decode what the exporters sent."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_evals.live.telemetry import Telemetry
from agent_evals.testing.scripted_openai import QueueResponder, Reply, ScriptedOpenAIServer

from .conftest import ChatPortal
from .receivers import Receiver

SECRET = "sk-proj-Zq8TtVwXy3456789abcdefGHIJ"
Script = Callable[..., QueueResponder]
TOOL_TURN = [Reply.tool_calls([("get_spoke", {"name": "crm-dev-neu"})], usage=(50, 5)), Reply.text("3 subnets.", usage=(60, 6))]


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


def traced_portal(root: Path, llm: ScriptedOpenAIServer, receiver: Receiver, **env: str) -> ChatPortal:
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "50",
            "OTEL_SERVICE_NAME": "portal-under-test", "APPLICATIONINSIGHTS_STATSBEAT_DISABLED_ALL": "true"}
    return ChatPortal(root, f"sqlite:///{root / 'c.sqlite3'}", llm, {**base, **env}).start()


def spans_of(receiver: Receiver, conversation_id: str) -> list[dict[str, Any]]:
    turns = [s for s in receiver.spans if s["attributes"].get("gen_ai.conversation.id") == conversation_id
             and s["name"].startswith("invoke_agent")]
    traces = {s["trace_id"] for s in turns}
    return [s for s in receiver.spans if s["trace_id"] in traces]


def test_a_chat_turn_is_traced_in_the_genai_conventions_without_content(
    tmp_path: Path, scripted_llm: ScriptedOpenAIServer, receiver: Receiver, script: Script
) -> None:
    azure = f"InstrumentationKey=11111111-2222-3333-4444-555555555555;IngestionEndpoint={receiver.url}/"
    portal = traced_portal(tmp_path, scripted_llm, receiver, APPLICATIONINSIGHTS_CONNECTION_STRING=azure)
    try:
        script(TOOL_TURN)
        cid = portal.chat(f"How many subnets has crm-dev-neu? my key {SECRET}").json()["conversation_id"]
        assert receiver.wait_for(lambda r: len(spans_of(r, cid)) >= 4), receiver.spans
        assert receiver.wait_for(lambda r: any(_azure_name(e) == "invoke_agent spoke" for e in r.envelopes))
    finally:
        portal.stop()
    spans = spans_of(receiver, cid)
    by_name = {s["name"]: s for s in spans}
    assert sorted(by_name) == ["chat agent-model", "execute_tool get_spoke", "invoke_agent spoke"]
    agent, tool = by_name["invoke_agent spoke"], by_name["execute_tool get_spoke"]
    chats = [s for s in spans if s["name"] == "chat agent-model"]
    assert len(chats) == 2 and all(s["parent_id"] == agent["span_id"] for s in [*chats, tool])
    assert agent["resource"]["service.name"] == "portal-under-test" and agent["scope"] == "agent_evals.live"
    assert {k: agent["attributes"][k] for k in ("gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.request.model",
                                                 "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")} == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "spoke", "gen_ai.request.model": "agent-model",
        "gen_ai.usage.input_tokens": 110, "gen_ai.usage.output_tokens": 11,
    }
    assert agent["attributes"]["gen_ai.provider.name"] == "openai"
    first = min(chats, key=lambda s: s["attributes"]["gen_ai.usage.input_tokens"])
    assert first["attributes"]["gen_ai.operation.name"] == "chat" and first["kind"] == 3  # CLIENT
    assert first["attributes"]["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert (first["attributes"]["gen_ai.usage.input_tokens"], first["attributes"]["gen_ai.usage.output_tokens"]) == (50, 5)
    assert first["attributes"]["gen_ai.conversation.id"] == cid
    assert tool["attributes"]["gen_ai.tool.name"] == "get_spoke" and tool["attributes"]["gen_ai.operation.name"] == "execute_tool"
    content_keys = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
                    "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}
    assert not content_keys & {k for s in spans for k in s["attributes"]}  # no content unless asked for
    assert not any(b"How many subnets" in body or SECRET.encode() in body for body in receiver.raw)
    names = {_azure_name(e) for e in receiver.envelopes}
    assert {"invoke_agent spoke", "chat agent-model", "execute_tool get_spoke"} <= names


def _azure_name(envelope: dict[str, Any]) -> str | None:
    return ((envelope.get("data") or {}).get("baseData") or {}).get("name")


def test_message_content_is_opt_in_and_scrubbed(
    tmp_path: Path, scripted_llm: ScriptedOpenAIServer, receiver: Receiver, script: Script
) -> None:
    portal = traced_portal(tmp_path, scripted_llm, receiver, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    try:
        script(TOOL_TURN)
        cid = portal.chat(f"How many subnets has crm-dev-neu? my key {SECRET}").json()["conversation_id"]
        assert receiver.wait_for(lambda r: len(spans_of(r, cid)) >= 4)
    finally:
        portal.stop()
    spans = spans_of(receiver, cid)
    chat = next(s for s in spans if s["name"].startswith("chat") and "gen_ai.input.messages" in s["attributes"])
    assert "How many subnets has crm-dev-neu? my key [redacted]" in chat["attributes"]["gen_ai.input.messages"]
    assert "get_spoke" in chat["attributes"]["gen_ai.output.messages"]
    tool = next(s for s in spans if s["name"] == "execute_tool get_spoke")
    assert tool["attributes"]["gen_ai.tool.call.arguments"] == '{"name": "crm-dev-neu"}'
    assert "crm-dev-neu" in tool["attributes"]["gen_ai.tool.call.result"]
    assert not any(SECRET.encode() in body for body in receiver.raw)


def test_no_variable_no_spans_and_a_failed_turn_is_an_error_span() -> None:
    assert not Telemetry.from_env({}).enabled
    assert not Telemetry.from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}).enabled
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agent_evals.record import AgentInfo

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry = Telemetry(provider)
    with telemetry.invoke_agent(AgentInfo("spoke", "m"), "c1") as span:
        span.failed("model", "model overloaded")
    (finished,) = exporter.get_finished_spans()
    assert finished.attributes["error.type"] == "model" and finished.status.description == "model overloaded"


def test_the_portal_runs_without_the_telemetry_extra() -> None:
    """FastAPI brings the OpenTelemetry API; the SDK and the exporters are the extra's."""
    code = (
        "import sys, logging\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.startswith(('opentelemetry.sdk', 'opentelemetry.exporter', 'azure')):\n"
        "            raise ImportError('No module named ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format='%(message)s')\n"
        "from agent_evals.packs.spoke.portal.server import default_routers\n"
        "from agent_evals.live.telemetry import Telemetry\n"
        "assert len(default_routers()) == 2\n"
        "t = Telemetry.from_env({'OTEL_EXPORTER_OTLP_ENDPOINT': 'http://127.0.0.1:4318'})\n"
        "assert not t.enabled\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "telemetry: OTEL_EXPORTER_OTLP_ENDPOINT is set, but No module named opentelemetry.sdk" in done.stdout
    assert "pip install 'agent-evals[telemetry]'" in done.stdout


def test_what_the_exporter_sent_is_scored_as_an_agent_instrumented_elsewhere(
    tmp_path: Path, scripted_llm: ScriptedOpenAIServer, receiver: Receiver, script: Script
) -> None:
    """The spans the real OTLP exporter sent (with content), written as OTLP/JSON lines as a collector's file
    exporter writes them, read back by ``agent-evals live --from`` into the same run record."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from agent_evals.live.otlp_import import conversations_from_spans, spans_of

    portal = traced_portal(tmp_path, scripted_llm, receiver, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    try:
        script(TOOL_TURN)
        cid = portal.chat("How many subnets has crm-dev-neu?").json()["conversation_id"]
        assert receiver.wait_for(lambda r: len(spans_of_conversation(r, cid)) >= 4)
    finally:
        portal.stop()
    lines = [MessageToDict(ExportTraceServiceRequest.FromString(body)) for body in receiver.otlp]
    spans = [span for line in lines for span in spans_of(line)]
    (found,) = [c for c in conversations_from_spans(spans) if c.id == cid]
    record = found.record
    assert (record.turns[0].user, record.final_reply) == ("How many subnets has crm-dev-neu?", "3 subnets.")
    assert [(c.name, c.arguments, c.outcome) for c in record.tool_calls] == [("get_spoke", {"name": "crm-dev-neu"}, "ok")]
    assert (record.agent.name, record.usage["agent"].prompt_tokens, record.usage["agent"].calls) == ("spoke", 110, 2)


def spans_of_conversation(receiver: Receiver, conversation_id: str) -> list[dict[str, Any]]:
    return spans_of(receiver, conversation_id)
