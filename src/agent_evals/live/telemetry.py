"""OpenTelemetry spans of the chat path, in the GenAI semantic conventions.

Each chat turn is an ``invoke_agent <agent>`` span; inside it, each model call is a
``chat <model>`` span and each tool the agent runs an ``execute_tool <tool>`` span:

================  ===========================================================================
span              attributes
================  ===========================================================================
invoke_agent      ``gen_ai.operation.name``, ``gen_ai.provider.name``, ``gen_ai.agent.name``,
                  ``gen_ai.conversation.id``, ``gen_ai.request.model``,
                  ``gen_ai.request.temperature``, ``gen_ai.usage.input_tokens`` /
                  ``output_tokens`` (the turn's), ``agent_evals.instructions_sha256``,
                  ``agent_evals.stop_reason``, ``error.type`` on a failed turn
chat              ``gen_ai.operation.name``, ``gen_ai.provider.name``, ``gen_ai.request.model``,
                  ``gen_ai.request.temperature``, ``gen_ai.request.max_tokens``,
                  ``gen_ai.response.model``, ``gen_ai.response.finish_reasons``,
                  ``gen_ai.usage.input_tokens`` / ``output_tokens``, ``gen_ai.conversation.id``
execute_tool      ``gen_ai.operation.name``, ``gen_ai.tool.name``, ``gen_ai.tool.type``,
                  ``error.type`` when the tool failed
================  ===========================================================================

**Message content is off by default.** With ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``
the spans also carry ``gen_ai.system_instructions``, ``gen_ai.input.messages`` and
``gen_ai.output.messages`` (chat), ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``
(execute_tool), with secrets scrubbed (:func:`agent_evals.secrets.scrub`).

**Where they go.** Over OTLP/HTTP when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set, with the exporter's own settings
(``OTEL_EXPORTER_OTLP_HEADERS``, timeouts, ``OTEL_SERVICE_NAME``; the service is
``agent-evals-portal`` unless named); to Azure Monitor when ``APPLICATIONINSIGHTS_CONNECTION_STRING``
is set (without offline retry files: spans it refuses are dropped); both when both are. Needs the ``telemetry`` extra (``azure-monitor`` for Azure Monitor);
without it, or without either variable, nothing is recorded and the chat runs as before (one
warning when a variable is set but the package is missing). ``OTEL_SDK_DISABLED=true`` turns it off.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from agent_evals.record import AgentInfo, Usage
from agent_evals.secrets import scrub

log = logging.getLogger(__name__)

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
OTLP_ENVS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
AZURE_ENV = "APPLICATIONINSIGHTS_CONNECTION_STRING"
SERVICE_NAME = "agent-evals-portal"
SCOPE = "agent_evals.live"


class Telemetry:
    """Spans of chat turns (see the module docstring); :meth:`disabled` records nothing."""

    def __init__(self, provider: Any = None, *, capture_content: bool = False, provider_name: str = "openai") -> None:
        self._provider = provider
        self._tracer = provider.get_tracer(SCOPE) if provider is not None else None
        self.capture_content = capture_content
        self.provider_name = provider_name

    @classmethod
    def disabled(cls) -> Telemetry:
        return cls()

    @property
    def enabled(self) -> bool:
        return self._tracer is not None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Telemetry:
        env = os.environ if env is None else env
        otlp = any(env.get(name) for name in OTLP_ENVS)
        azure = bool(env.get(AZURE_ENV))
        if env.get("OTEL_SDK_DISABLED", "").lower() == "true" or not (otlp or azure):
            return cls.disabled()
        try:
            provider = _provider(otlp=otlp, azure=azure, env=env)
        except ImportError as exc:
            extra = "azure-monitor" if azure and not otlp else "telemetry"
            log.warning("telemetry: %s is set, but %s: pip install 'agent-evals[%s]'; no spans are sent",
                        " and ".join(n for n in (*OTLP_ENVS, AZURE_ENV) if env.get(n)), exc, extra)
            return cls.disabled()
        capture = env.get(CAPTURE_ENV, "").strip().lower() in ("true", "1", "yes")
        name = "azure.ai.openai" if env.get("AZURE_OPENAI_ENDPOINT") else "openai"
        return cls(provider, capture_content=capture, provider_name=name)

    def shutdown(self) -> None:
        """Send what is left and stop (the portal's shutdown)."""
        if self._provider is not None:
            self._provider.shutdown()
            self._provider, self._tracer = None, None

    def flush(self, timeout_ms: int = 10_000) -> bool:
        return bool(self._provider.force_flush(timeout_ms)) if self._provider is not None else True

    # -- the spans ------------------------------------------------------------------------
    @contextmanager
    def invoke_agent(self, agent: AgentInfo, conversation_id: str) -> Iterator[AgentSpan]:
        if self._tracer is None:
            yield AgentSpan(None)
            return
        from opentelemetry.trace import SpanKind  # lazy: loads opentelemetry only when used (start-up time)

        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": self.provider_name,
            "gen_ai.agent.name": agent.name, "gen_ai.conversation.id": conversation_id,
            "gen_ai.request.model": agent.model, "agent_evals.instructions_sha256": agent.instructions_sha256,
        }
        if agent.temperature is not None:
            attributes["gen_ai.request.temperature"] = agent.temperature
        with self._tracer.start_as_current_span(
            f"invoke_agent {agent.name}", kind=SpanKind.INTERNAL, attributes=attributes, record_exception=False,
            set_status_on_exception=False,
        ) as span:
            yield AgentSpan(span)

    def wrap_model(self, model: Any, conversation_id: str) -> Any:
        return model if self._tracer is None else TracedModel(model, self, conversation_id)

    def wrap_tools(self, tools: Any) -> Any:
        return tools if self._tracer is None else TracedTools(tools, self)

    def _content(self, value: Any) -> str:
        return json.dumps(scrub(value), ensure_ascii=False, default=str)


class AgentSpan:
    """The turn's span, told how the turn went."""

    def __init__(self, span: Any) -> None:
        self.span = span

    def answered(self, usage: Usage, stop_reason: str) -> None:
        if self.span is not None:
            self.span.set_attributes({
                "gen_ai.usage.input_tokens": usage.prompt_tokens, "gen_ai.usage.output_tokens": usage.completion_tokens,
                "agent_evals.stop_reason": stop_reason,
            })

    def failed(self, kind: str, message: str) -> None:
        if self.span is not None:
            from opentelemetry.trace import Status, StatusCode  # lazy: loads opentelemetry only when used (start-up time)

            self.span.set_attribute("error.type", kind)
            self.span.set_status(Status(StatusCode.ERROR, scrub(message)[:500]))


class TracedModel:
    """A chat model whose every call is a ``chat`` span."""

    def __init__(self, model: Any, telemetry: Telemetry, conversation_id: str) -> None:
        self._model = model
        self._telemetry = telemetry
        self._conversation_id = conversation_id

    @property
    def model(self) -> str:
        return str(self._model.model)

    async def complete(self, messages: Sequence[dict[str, Any]], **options: Any) -> Any:
        from opentelemetry.trace import SpanKind, Status, StatusCode  # lazy: loads opentelemetry only when used (start-up time)

        telemetry = self._telemetry
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": telemetry.provider_name,
            "gen_ai.request.model": self.model, "gen_ai.conversation.id": self._conversation_id,
        }
        for option, key in (("temperature", "gen_ai.request.temperature"), ("max_tokens", "gen_ai.request.max_tokens")):
            if options.get(option) is not None:
                attributes[key] = options[option]
        if telemetry.capture_content:
            system = [{"type": "text", "content": m.get("content")} for m in messages if m.get("role") == "system"]
            attributes["gen_ai.system_instructions"] = telemetry._content(system)
            attributes["gen_ai.input.messages"] = telemetry._content(
                [semconv_message(m) for m in messages if m.get("role") != "system"]
            )
        with telemetry._tracer.start_as_current_span(  # type: ignore[union-attr]  # made only with a tracer
            f"chat {self.model}", kind=SpanKind.CLIENT, attributes=attributes, record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                response = await self._model.complete(messages, **options)
            except BaseException as exc:
                span.set_attribute("error.type", getattr(exc, "kind", None) or type(exc).__name__)
                span.set_status(Status(StatusCode.ERROR, scrub(str(exc))[:500]))
                raise
            span.set_attributes({
                "gen_ai.response.model": response.model or self.model,
                "gen_ai.response.finish_reasons": [response.finish_reason or ("tool_calls" if response.tool_calls else "stop")],
                "gen_ai.usage.input_tokens": response.usage.prompt_tokens,
                "gen_ai.usage.output_tokens": response.usage.completion_tokens,
            })
            if telemetry.capture_content:
                output = semconv_message(response.as_message(), finish_reason=response.finish_reason or "stop")
                span.set_attribute("gen_ai.output.messages", telemetry._content([output]))
            return response

    def __getattr__(self, name: str) -> Any:  # aclose and anything else of the wrapped model
        return getattr(self._model, name)


class TracedTools:
    """A tool executor whose every call is an ``execute_tool`` span."""

    def __init__(self, tools: Any, telemetry: Telemetry) -> None:
        self._tools = tools
        self._telemetry = telemetry

    @property
    def specs(self) -> list[dict[str, Any]]:
        return list(self._tools.specs)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        from opentelemetry.trace import SpanKind, Status, StatusCode  # lazy: loads opentelemetry only when used (start-up time)

        telemetry = self._telemetry
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.type": "function",
        }
        if telemetry.capture_content:
            attributes["gen_ai.tool.call.arguments"] = telemetry._content(arguments)
        started = time.perf_counter()
        with telemetry._tracer.start_as_current_span(  # type: ignore[union-attr]  # made only with a tracer
            f"execute_tool {name}", kind=SpanKind.INTERNAL, attributes=attributes, record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await self._tools.call(name, arguments)
            except BaseException as exc:
                span.set_attribute("error.type", getattr(exc, "kind", None) or type(exc).__name__)
                span.set_status(Status(StatusCode.ERROR, scrub(str(exc))[:500]))
                raise
            if result.is_error:
                span.set_attribute("error.type", "tool_error")
                span.set_status(Status(StatusCode.ERROR))
            if telemetry.capture_content:
                span.set_attribute("gen_ai.tool.call.result", telemetry._content(result.text))
            span.set_attribute("agent_evals.tool.duration_ms", round((time.perf_counter() - started) * 1000, 3))
            return result


def semconv_message(message: Mapping[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    """A chat message in the GenAI conventions' form: ``{role, parts: [text | tool_call | tool_call_response]}``."""
    role = str(message.get("role") or "user")
    parts: list[dict[str, Any]] = []
    if role == "tool":
        parts.append({"type": "tool_call_response", "id": message.get("tool_call_id"), "response": message.get("content")})
    elif message.get("content"):
        parts.append({"type": "text", "content": message.get("content")})
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        try:
            arguments: Any = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = function.get("arguments")
        parts.append({"type": "tool_call", "id": call.get("id"), "name": function.get("name"), "arguments": arguments})
    out: dict[str, Any] = {"role": role, "parts": parts}
    if finish_reason is not None:
        out["finish_reason"] = finish_reason
    return out


def _provider(*, otlp: bool, azure: bool, env: Mapping[str, str]) -> Any:
    from opentelemetry.sdk.resources import SERVICE_NAME as SERVICE_KEY  # lazy: loads opentelemetry only when used (start-up time)
    from opentelemetry.sdk.resources import Resource  # lazy: loads opentelemetry only when used (start-up time)
    from opentelemetry.sdk.trace import TracerProvider  # lazy: loads opentelemetry only when used (start-up time)
    from opentelemetry.sdk.trace.export import BatchSpanProcessor  # lazy: loads opentelemetry only when used (start-up time)

    resource = Resource.create({} if env.get("OTEL_SERVICE_NAME") else {SERVICE_KEY: SERVICE_NAME})
    exporters = []
    if otlp:
        exporters.append(_otlp_exporter(env))
    if azure:
        from azure.monitor.opentelemetry.exporter import AzureMonitorTraceExporter  # lazy: loads azure only when used (start-up time)

        # no retry files in the system's temp folder: spans Azure Monitor refused are dropped
        exporters.append(AzureMonitorTraceExporter(connection_string=env[AZURE_ENV], disable_offline_storage=True))
    provider = TracerProvider(resource=resource)
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def _otlp_exporter(env: Mapping[str, str]) -> Any:
    protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter  # lazy: loads opentelemetry only when used (start-up time)

        return GrpcExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # lazy: loads opentelemetry only when used (start-up time)

    return OTLPSpanExporter()
