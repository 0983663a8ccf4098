"""OpenAIChatModel through the real openai SDK against the scripted server."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

import pytest

from agent_evals.llm import (
    ChatModel,
    ChatResponse,
    Endpoint,
    LLMError,
    OpenAIChatModel,
    PriceTable,
    RetryPolicy,
)
from agent_evals.llm.pricing import ModelPrice
from agent_evals.testing.scripted_openai import QueueResponder, Reply, ScriptedOpenAIServer

from .llm_fakes import RecordedSleeps

HELLO = [{"role": "user", "content": "hello"}]
TOOLS = [{"type": "function", "function": {"name": "get_spoke", "parameters": {"type": "object"}}}]
SECRET = "sk-test-SECRET-0123456789"


def complete(model: OpenAIChatModel, **kwargs: Any) -> ChatResponse:
    """One call in its own event loop, closing the client afterwards (as a provider would)."""

    async def call() -> ChatResponse:
        async with model:
            return await model.complete(HELLO, **kwargs)

    return asyncio.run(call())


def compatible(
    server: ScriptedOpenAIServer, sleeps: RecordedSleeps | None = None, **kwargs: Any
) -> OpenAIChatModel:
    if sleeps is not None:
        kwargs["sleep"] = sleeps
    return OpenAIChatModel(Endpoint.compatible(server.base_url), "local-model", **kwargs)


# --- the three endpoint kinds ------------------------------------------------------------


def test_compatible_server_without_key_sends_placeholder(server: ScriptedOpenAIServer) -> None:
    server.responder = QueueResponder({"local-model": ["hi"]})
    model = compatible(server)
    assert isinstance(model, ChatModel)
    response = complete(model)
    assert (response.content, response.model, response.finish_reason) == ("hi", "local-model", "stop")
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer not-needed"
    assert request.messages == HELLO


def test_openai_kind_sends_bearer_key(server: ScriptedOpenAIServer) -> None:
    model = OpenAIChatModel(Endpoint.openai(SECRET, base_url=server.base_url), "gpt-4o")
    assert complete(model).content == "echo: hello"
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert server.requests[0].model == "gpt-4o"


def test_azure_with_api_key_uses_deployment_path_version_and_api_key_header(
    server: ScriptedOpenAIServer,
) -> None:
    endpoint = Endpoint.azure(server.azure_endpoint, api_version="2024-10-21", api_key=SECRET)
    response = complete(OpenAIChatModel(endpoint, "my-gpt4o-deployment"))
    assert response.content == "echo: hello"
    request = server.requests[0]
    assert request.path == "/openai/deployments/my-gpt4o-deployment/chat/completions"
    assert request.deployment == "my-gpt4o-deployment"
    assert request.query["api-version"] == "2024-10-21"
    assert request.headers["api-key"] == SECRET
    assert "authorization" not in request.headers


def test_azure_with_ad_token_sends_bearer(server: ScriptedOpenAIServer) -> None:
    endpoint = Endpoint.azure(server.azure_endpoint, api_version="2024-10-21", ad_token="entra-token-123")
    complete(OpenAIChatModel(endpoint, "dep"))
    request = server.requests[0]
    assert request.headers["authorization"] == "Bearer entra-token-123"
    assert "api-key" not in request.headers


def test_azure_without_credentials_uses_default_azure_credential(
    server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # azure-identity is optional and not installed here: stand in a fake with the same API
    scopes: list[str] = []

    def get_bearer_token_provider(credential: object, scope: str) -> Callable[[], str]:
        scopes.append(scope)
        return lambda: "token-from-default-credential"

    fake = types.ModuleType("azure.identity")
    fake.DefaultAzureCredential = object  # type: ignore[attr-defined]
    fake.get_bearer_token_provider = get_bearer_token_provider  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "azure", types.ModuleType("azure"))
    monkeypatch.setitem(sys.modules, "azure.identity", fake)
    endpoint = Endpoint.azure(server.azure_endpoint, api_version="2024-10-21")
    assert endpoint.azure_auth == "default_credential"
    complete(OpenAIChatModel(endpoint, "dep"))
    assert scopes == ["https://cognitiveservices.azure.com/.default"]
    assert server.requests[0].headers["authorization"] == "Bearer token-from-default-credential"


def test_a_token_provider_is_asked_before_every_request_and_may_be_async(
    server: ScriptedOpenAIServer,
) -> None:
    from agent_evals.llm.chat_http import ChatClient

    tokens = iter(["first", "second"])

    async def provider() -> str:
        return next(tokens)

    async def two_requests() -> None:
        client = ChatClient(Endpoint.azure(server.azure_endpoint, api_version="2024-10-21"), timeout_s=10,
                            token_provider=provider)
        try:
            for _ in range(2):
                await client.create({"model": "dep", "messages": HELLO})
        finally:
            await client.aclose()

    asyncio.run(two_requests())
    assert [r.headers["authorization"] for r in server.requests] == ["Bearer first", "Bearer second"]
    assert all("api-key" not in r.headers for r in server.requests)


# --- request and reply content -----------------------------------------------------------


def test_tools_and_temperature_are_sent_only_when_given(server: ScriptedOpenAIServer) -> None:
    model = compatible(server)
    complete(model)
    complete(model, tools=TOOLS, temperature=0.0)
    complete(model, tools=[])  # an empty list is not sent: OpenAI rejects "tools": []
    plain, with_tools, empty = (r.body for r in server.requests)
    assert "tools" not in plain and "temperature" not in plain
    assert with_tools["tools"] == TOOLS and with_tools["temperature"] == 0.0
    assert "tools" not in empty


def test_tool_calls_keep_raw_arguments_including_malformed_json(server: ScriptedOpenAIServer) -> None:
    server.responder = lambda r: Reply.tool_calls(
        [("get_spoke", {"name": "x"}), ("bad", "{not json"), ("odd", '{"a":1,  "b" : [ ]}')],
        content="calling",
    )
    response = complete(compatible(server), tools=TOOLS)
    assert [(c.id, c.name, c.raw_arguments) for c in response.tool_calls] == [
        ("call_0_0", "get_spoke", '{"name": "x"}'),
        ("call_0_1", "bad", "{not json"),
        ("call_0_2", "odd", '{"a":1,  "b" : [ ]}'),
    ]
    assert response.content == "calling"
    assert response.finish_reason == "tool_calls"
    assert response.as_message()["tool_calls"][1]["function"]["arguments"] == "{not json"


def test_missing_tool_call_ids_are_filled_in(server: ScriptedOpenAIServer) -> None:
    # some local servers omit ids; the tool result needs one to refer to
    call = {"type": "function", "function": {"name": "f", "arguments": "{}"}}
    body = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}
    server.responder = lambda r: Reply.json(body)
    assert complete(compatible(server)).tool_calls[0].id == "call_0"


def test_usage_and_cost_from_price_table(server: ScriptedOpenAIServer) -> None:
    server.responder = lambda r: Reply.text("ok", usage=(1_000_000, 500_000))
    model = OpenAIChatModel(Endpoint.openai(SECRET, base_url=server.base_url), "gpt-4o-mini")
    usage = complete(model).usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens, usage.calls) == (
        1_000_000,
        500_000,
        1_500_000,
        1,
    )
    assert usage.cost == pytest.approx(0.15 + 0.30)


def test_cost_uses_override_for_deployment_name_and_reported_model(server: ScriptedOpenAIServer) -> None:
    # Azure reports the underlying model; the deployment name is priced by override first
    server.responder = lambda r: Reply.text("ok", usage=(2_000_000, 0), model="gpt-4o-2024-11-20")
    endpoint = Endpoint.azure(server.azure_endpoint, api_version="2024-10-21", api_key=SECRET)
    by_reported = complete(OpenAIChatModel(endpoint, "my-deployment"))
    assert by_reported.model == "gpt-4o-2024-11-20"
    assert by_reported.usage.cost == pytest.approx(5.0)
    prices = PriceTable({"my-deployment": ModelPrice(1.0, 1.0)})
    assert complete(OpenAIChatModel(endpoint, "my-deployment", prices=prices)).usage.cost == pytest.approx(
        2.0
    )


def test_reply_without_usage_counts_one_call_and_zero_tokens(server: ScriptedOpenAIServer) -> None:
    body = {"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}
    server.responder = lambda r: Reply.json(body)
    response = complete(compatible(server))
    assert (response.content, response.usage.calls, response.usage.total_tokens, response.usage.cost) == (
        "hi",
        1,
        0,
        0.0,
    )
    assert response.model == "local-model"  # the reply named none: the requested name


# --- unusable replies --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (Reply.malformed("{not json"), "sent an unusable reply: the body is not valid JSON"),
        (
            Reply.malformed("<html>busy</html>", content_type="text/html"),
            "not a chat completion object: '<html>",
        ),
        (Reply.json({"choices": []}), "no choices in the reply"),
        (Reply.json({"id": "x"}), "no choices in the reply (choices=None)"),
        (Reply.json({"choices": [{"finish_reason": "stop"}]}), "the first choice has no message"),
        (Reply.json({"choices": [{"message": {"content": 5}}]}), "message content is a int, not text"),
    ],
)
def test_unusable_reply_is_llm_error_without_retry(
    server: ScriptedOpenAIServer, sleeps: RecordedSleeps, reply: Reply, expected: str
) -> None:
    server.responder = lambda r: reply
    with pytest.raises(LLMError, match=r"model local-model at 127\.0\.0\.1") as caught:
        complete(compatible(server, sleeps))
    assert expected in str(caught.value)
    assert server.request_count == 1 and sleeps.waits == []


# --- retries -----------------------------------------------------------------------------


def test_429_is_retried_honouring_retry_after(server: ScriptedOpenAIServer, sleeps: RecordedSleeps) -> None:
    server.responder = QueueResponder(
        [
            Reply.error(429, headers={"Retry-After": "2"}),
            Reply.error(429, headers={"retry-after-ms": "250"}),
            "finally",
        ]
    )
    assert complete(compatible(server, sleeps)).content == "finally"
    assert sleeps.waits == [2.0, 0.25]
    assert server.request_count == 3


def test_500_then_success_backs_off_exponentially(
    server: ScriptedOpenAIServer, sleeps: RecordedSleeps
) -> None:
    server.responder = QueueResponder([Reply.error(500), Reply.error(503), "ok"])
    model = compatible(server, sleeps, retry=RetryPolicy(base_delay_s=0.5, jitter=0.25), rng=lambda: 1.0)
    assert complete(model).content == "ok"
    assert sleeps.waits == [0.375, 0.75]  # 0.5 and 1.0, less the full 25 % jitter


def test_retries_exhausted_names_model_host_attempts_and_status(
    server: ScriptedOpenAIServer, sleeps: RecordedSleeps, caplog: pytest.LogCaptureFixture
) -> None:
    server.responder = lambda r: Reply.error(503, "overloaded")
    with caplog.at_level(logging.WARNING, logger="agent_evals"), pytest.raises(LLMError) as caught:
        complete(compatible(server, sleeps))
    host = server.url.removeprefix("http://")
    assert str(caught.value) == f"HTTP 503 from the model server at {host} (model local-model, after 4 attempts): overloaded"
    assert server.request_count == 4 and len(sleeps.waits) == 3
    retries = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage().split(" failed")[0] for r in retries] == [
        f"model local-model at {host}: attempt {n}/4" for n in (1, 2, 3)
    ]
    assert "HTTP 503: overloaded" in retries[0].getMessage() and "retrying in" in retries[0].getMessage()


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_client_errors_fail_at_once(
    server: ScriptedOpenAIServer, sleeps: RecordedSleeps, status: int
) -> None:
    server.responder = lambda r: Reply.error(status, "bad thing")
    host = server.url.removeprefix("http://")
    with pytest.raises(LLMError) as caught:
        complete(compatible(server, sleeps))
    assert str(caught.value).startswith(f"HTTP {status} from the model server at {host} (model local-model): bad thing")
    assert server.request_count == 1 and sleeps.waits == []


def test_timeout_is_retried_then_llm_error(server: ScriptedOpenAIServer, sleeps: RecordedSleeps) -> None:
    server.responder = lambda r: Reply.text("too late", delay_s=1.0)
    model = compatible(server, sleeps, timeout_s=0.2, retry=RetryPolicy(max_attempts=2))
    with pytest.raises(LLMError, match=r"did not answer after 2 attempts: no answer within 0\.2 s .* raise LLM_TIMEOUT_S"):
        complete(model)
    assert server.request_count == 2 and len(sleeps.waits) == 1


def test_timeout_then_fast_reply_succeeds(server: ScriptedOpenAIServer, sleeps: RecordedSleeps) -> None:
    server.responder = QueueResponder([Reply.text("slow", delay_s=1.0), "fast"])
    assert complete(compatible(server, sleeps, timeout_s=0.2)).content == "fast"


def test_connection_refused_is_retried_then_llm_error(sleeps: RecordedSleeps) -> None:
    with ScriptedOpenAIServer() as gone:
        url = gone.base_url  # the port is free again once the server stopped
    model = OpenAIChatModel(Endpoint.compatible(url), "m", sleep=sleeps, retry=RetryPolicy(max_attempts=3))
    with pytest.raises(LLMError) as caught:
        complete(model)
    host = url.removeprefix("http://").removesuffix("/v1")
    assert str(caught.value) == (
        f"model m at {host} unreachable after 3 attempts: connection refused — is the model server running at {url}?"
    )
    assert len(sleeps.waits) == 2


def test_finished_script_is_not_retried(server: ScriptedOpenAIServer, sleeps: RecordedSleeps) -> None:
    # the scripted server marks "queue empty" with x-should-retry: false
    server.responder = QueueResponder([])
    with pytest.raises(LLMError, match=r"HTTP 500 from the model server .*\(model local-model\): QueueResponder: no scripted reply left"):
        complete(compatible(server, sleeps))
    assert sleeps.waits == []


# --- secrets and lifecycle ---------------------------------------------------------------


def test_secrets_stay_out_of_repr_logs_and_errors(
    server: ScriptedOpenAIServer, sleeps: RecordedSleeps, caplog: pytest.LogCaptureFixture
) -> None:
    # a server that echoes the key in its error text must not get it into our messages
    server.responder = QueueResponder(
        [Reply.error(500, f"key {SECRET} overloaded"), Reply.error(401, f"bad {SECRET}")]
    )
    endpoint = Endpoint.azure(server.azure_endpoint, api_version="2024-10-21", api_key=SECRET)
    model = OpenAIChatModel(endpoint, "dep", sleep=sleeps)
    with caplog.at_level(logging.DEBUG), pytest.raises(LLMError) as caught:
        complete(model)
    assert server.requests[0].headers["api-key"] == SECRET  # it was sent…
    for text in (str(caught.value), caplog.text, repr(model), repr(endpoint), str(endpoint)):
        assert SECRET not in text  # …and shown nowhere
    assert "bad ***" in str(caught.value)


def test_model_works_across_event_loops(server: ScriptedOpenAIServer) -> None:
    # Promptfoo providers may call asyncio.run once per test; the SDK client is per loop
    model = compatible(server)
    for _ in range(2):
        assert asyncio.run(model.complete(HELLO)).content == "echo: hello"
    assert complete(model).content == "echo: hello"


def test_aclose_closes_the_client(server: ScriptedOpenAIServer) -> None:
    model = compatible(server)

    async def use_and_close() -> None:
        await model.complete(HELLO)
        await model.aclose()
        await model.complete(HELLO)  # a new client is made on demand
        await model.aclose()

    asyncio.run(use_and_close())
    assert server.request_count == 2


def test_concurrent_calls_overlap(server: ScriptedOpenAIServer) -> None:
    together = threading.Barrier(8)  # each reply waits for all 8 requests: only calls in flight at once get here

    def reply(_: object) -> Reply:
        together.wait(timeout=60)
        return Reply.text("ok")

    server.responder = lambda r: Reply.text("warm")
    model = compatible(server)

    async def many() -> list[ChatResponse]:
        await model.complete(HELLO)  # warm up: import the SDK and connect
        server.responder = reply
        return await asyncio.gather(*(model.complete(HELLO) for _ in range(8)))

    async def many_then_close() -> list[ChatResponse]:
        async with model:
            return await many()

    responses = asyncio.run(many_then_close())
    assert [r.content for r in responses] == ["ok"] * 8
    assert server.max_in_flight == 8


# --- caps, finish reasons, repairs -------------------------------------------------------


def test_the_models_cap_goes_with_every_request_unless_the_call_passes_one(server: ScriptedOpenAIServer) -> None:
    complete(compatible(server, max_tokens=300))
    complete(compatible(server, max_tokens=300), max_tokens=12)
    complete(compatible(server))  # no cap: none sent
    assert [r.body.get("max_tokens") for r in server.requests] == [300, 12, None]


def test_a_model_that_refuses_max_tokens_gets_max_completion_tokens(
    server: ScriptedOpenAIServer, sleeps: RecordedSleeps
) -> None:
    refusal = {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                    "Use 'max_completion_tokens' instead.", "type": "invalid_request_error",
                         "param": "max_tokens", "code": "unsupported_parameter"}}

    def reasoning_model(request: Any) -> Reply:
        return Reply.error(400, refusal) if "max_tokens" in request.body else Reply.text("thought about it")

    server.responder = reasoning_model
    model = compatible(server, sleeps, max_tokens=800)
    assert complete(model).content == "thought about it"
    assert complete(model).content == "thought about it"  # remembered: asked once only
    bodies = [r.body for r in server.requests]
    assert [("max_tokens" in b, b.get("max_completion_tokens")) for b in bodies] == [(True, None), (False, 800), (False, 800)]
    assert sleeps.waits == []  # not a retry


def test_another_400_is_not_resent(server: ScriptedOpenAIServer) -> None:
    server.responder = lambda r: Reply.error(400, "max_tokens is too large")
    with pytest.raises(LLMError, match="HTTP 400 .*max_tokens is too large"):
        complete(compatible(server, max_tokens=10))
    assert server.request_count == 1


def test_an_unknown_finish_reason_is_kept(server: ScriptedOpenAIServer) -> None:
    server.responder = lambda r: Reply.text("hm", finish_reason="eos_token")
    response = complete(compatible(server))
    assert (response.content, response.finish_reason) == ("hm", "eos_token")


def test_length_is_surfaced(server: ScriptedOpenAIServer) -> None:
    server.responder = lambda r: Reply.text("cut", finish_reason="length")
    assert complete(compatible(server)).finish_reason == "length"


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        pytest.param("{&quot;name&quot;: &quot;crm-dev-neu&quot;}", '{"name": "crm-dev-neu"}', id="escaped: decoded"),
        pytest.param("{&#34;city&#34;: &#34;Paris&#34;}", '{"city": "Paris"}', id="numeric entities"),
        pytest.param('{"q": "a &amp; b"}', '{"q": "a &amp; b"}', id="valid JSON: untouched"),
        pytest.param("{&quot;broken", "{&quot;broken", id="still not JSON: kept raw"),
        pytest.param("not json & not html", "not json & not html", id="plain text"),
    ],
)
def test_html_escaped_arguments_are_decoded_only_when_that_makes_json(
    server: ScriptedOpenAIServer, sent: str, kept: str
) -> None:
    server.responder = lambda r: Reply.tool_calls([("get_spoke", sent)])
    assert complete(compatible(server), tools=TOOLS).tool_calls[0].raw_arguments == kept


def test_a_200_without_choices_is_a_model_error(server: ScriptedOpenAIServer) -> None:
    server.responder = lambda r: Reply.json({"object": "chat.completion", "choices": []})
    with pytest.raises(LLMError) as caught:
        complete(compatible(server))
    assert caught.value.kind == "model" and "sent an unusable reply: no choices in the reply" in str(caught.value)


def test_bad_cap_or_tool_choice_is_refused_when_built(server: ScriptedOpenAIServer) -> None:
    from agent_evals.llm import LLMConfigError

    with pytest.raises(LLMConfigError, match="max_tokens must be at least 1, got 0"):
        compatible(server, max_tokens=0)
    with pytest.raises(LLMConfigError, match="tool_choice must be one of auto, required, none, omit, got 'any'"):
        compatible(server, tool_choice="any")
