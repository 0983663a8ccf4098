"""The model client (agent_evals.llm.chat_http) sends what the openai SDK sends and reads what it reads.

The kit posts chat completions with ``httpx2`` instead of the SDK (whose import costs a cold worker
~0.25 s of CPU). Side by side against the scripted server, for each endpoint kind: the same path,
query, credential headers and body; a reply's body taken the same way (JSON, text, an error); an error
answer with the same status, body and headers.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agent_evals.llm.chat_http import ChatClient, StatusError
from agent_evals.llm.endpoint import PLACEHOLDER_API_KEY, Endpoint
from agent_evals.testing.scripted_openai import Reply, ScriptedOpenAIServer

openai = pytest.importorskip("openai")  # a test dependency only: the kit does not import it

KEY = "sk-test-parity-0123456789"
REQUEST: dict[str, Any] = {
    "model": "dep-1",
    "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "héllo & <b>"}],
    "tools": [{"type": "function", "function": {"name": "get_spoke", "parameters": {"type": "object"}}}],
    "tool_choice": "auto",
    "max_tokens": 64,
    "temperature": 0.0,
}
COMPARED_HEADERS = ("authorization", "api-key", "content-type", "accept")


def sdk_client(endpoint: Endpoint, token: str | None) -> Any:
    """The SDK client the kit used to build for ``endpoint`` (token: what a token provider gives)."""
    common: dict[str, Any] = {"max_retries": 0, "timeout": 10.0}
    if endpoint.kind != "azure":
        key = endpoint.api_key.reveal() if endpoint.api_key else PLACEHOLDER_API_KEY
        return openai.AsyncOpenAI(api_key=key, base_url=endpoint.url, **common)
    azure: dict[str, Any] = {"azure_endpoint": endpoint.url, "api_version": endpoint.api_version}
    if endpoint.api_key is not None:
        azure["api_key"] = endpoint.api_key.reveal()
    elif endpoint.azure_ad_token is not None:
        azure["azure_ad_token"] = endpoint.azure_ad_token.reveal()
    else:
        azure["azure_ad_token_provider"] = lambda: token
    return openai.AsyncAzureOpenAI(**azure, **common)


async def through_sdk(endpoint: Endpoint, token: str | None) -> Any:
    from openai.types.chat import ChatCompletion

    async with sdk_client(endpoint, token) as client:
        return await client.post("/chat/completions", cast_to=ChatCompletion, body=REQUEST,
                                 options={"security": {"bearer_auth": True}})


async def through_kit(endpoint: Endpoint, token: str | None) -> Any:
    client = ChatClient(endpoint, timeout_s=10.0, token_provider=(lambda: token) if token else None)
    try:
        return await client.create(REQUEST)
    finally:
        await client.aclose()


AZURE_VERSION = "2024-10-21"
KINDS = ["compatible without a key", "compatible with a key", "openai", "azure, api key", "azure, token",
         "azure, token provider"]


def endpoints(server: ScriptedOpenAIServer) -> dict[str, tuple[Endpoint, str | None]]:
    azure = server.azure_endpoint
    return {
        "compatible without a key": (Endpoint.compatible(server.base_url), None),
        "compatible with a key": (Endpoint.compatible(server.base_url, api_key=KEY), None),
        "openai": (Endpoint.openai(KEY, base_url=server.base_url), None),
        "azure, api key": (Endpoint.azure(azure, api_version=AZURE_VERSION, api_key=KEY), None),
        "azure, token": (Endpoint.azure(azure, api_version=AZURE_VERSION, ad_token=KEY), None),
        "azure, token provider": (Endpoint.azure(azure, api_version=AZURE_VERSION), "from-provider"),
    }


@pytest.mark.parametrize("kind", KINDS)
def test_the_request_is_the_sdks(server: ScriptedOpenAIServer, kind: str) -> None:
    endpoint, token = endpoints(server)[kind]
    asyncio.run(through_sdk(endpoint, token))
    asyncio.run(through_kit(endpoint, token))
    sdk, kit = server.requests
    assert (kit.path, kit.query, kit.deployment) == (sdk.path, sdk.query, sdk.deployment)
    for header in COMPARED_HEADERS:
        assert kit.headers.get(header) == sdk.headers.get(header), header
    assert kit.body == sdk.body == REQUEST


BODIES = {
    "JSON": Reply.json({"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}], "extra": [1]}),
    "JSON as text/plain": Reply.malformed(json.dumps({"choices": []}), content_type="text/plain"),
    "HTML": Reply.malformed("<html>busy</html>", content_type="text/html"),
    "broken JSON": Reply.malformed("{not json"),
    "JSON with a charset": Reply.malformed(json.dumps({"id": "x"}),
                                           content_type="application/json; charset=utf-8"),
}


@pytest.mark.parametrize("name", list(BODIES))
def test_a_reply_body_is_taken_as_the_sdk_took_it(server: ScriptedOpenAIServer, name: str) -> None:
    """JSON when the content type says so (broken JSON: a ValueError), else parsed if it parses, else text."""
    server.responder = lambda request: BODIES[name]
    endpoint = Endpoint.compatible(server.base_url)
    sdk, kit = _outcome(through_sdk(endpoint, None)), _outcome(through_kit(endpoint, None))
    assert kit == sdk


def _outcome(call: Any) -> Any:
    """What a reply became: the JSON the SDK's object holds, the text, or the kind of error."""
    try:
        value = asyncio.run(call)
    except ValueError:
        return "ValueError"
    if hasattr(value, "model_dump"):  # the SDK's object, built without validation from the JSON
        return value.model_dump(exclude_unset=True)
    return value


def test_an_error_answer_keeps_what_the_sdk_kept(server: ScriptedOpenAIServer) -> None:
    body = {"error": {"message": "Unsupported parameter: 'max_tokens'", "type": "invalid_request_error"}}
    server.responder = lambda request: Reply.error(400, body, headers={"x-request-id": "r-1"})
    endpoint = Endpoint.compatible(server.base_url)
    with pytest.raises(openai.BadRequestError) as sdk:
        asyncio.run(through_sdk(endpoint, None))
    with pytest.raises(StatusError) as kit:
        asyncio.run(through_kit(endpoint, None))
    assert kit.value.status == sdk.value.status_code == 400
    assert kit.value.body == body and sdk.value.body == body["error"]  # the SDK keeps the inner object
    assert kit.value.headers["x-request-id"] == sdk.value.response.headers["x-request-id"] == "r-1"


def test_the_body_is_encoded_as_the_sdks_http_client_encodes_json() -> None:
    """Byte for byte (the scripted server sees bodies parsed): compact, UTF-8, a NaN refused."""
    import httpx2

    from agent_evals.llm.chat_http import _encoded

    assert _encoded(REQUEST) == httpx2.Request("POST", "http://127.0.0.1/", json=REQUEST).content
    with pytest.raises(ValueError):
        httpx2.Request("POST", "http://127.0.0.1/", json={"temperature": float("nan")})
    with pytest.raises(ValueError):
        _encoded({"temperature": float("nan")})
