"""`OpenAIChatModel`: the :class:`~agent_evals.llm.types.ChatModel` over the openai SDK.

One class serves the three endpoint kinds (:class:`~agent_evals.llm.endpoint.Endpoint`):
``AsyncAzureOpenAI`` for Azure (the model name is the deployment; the SDK builds
``/openai/deployments/{model}/chat/completions?api-version=…``), ``AsyncOpenAI`` with a
``base_url`` for OpenAI and OpenAI-compatible servers.

The SDK retries nothing (``max_retries=0``); :mod:`agent_evals.llm.retry` does, so each
retry is logged and tests can inject the sleep and the clock. The ``openai`` package is
imported lazily, on the first call, so importing this module stays cheap.

The SDK client is bound to the event loop it was created on; the model makes a new one
when it is used from another loop (e.g. each ``asyncio.run`` of a Promptfoo provider).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agent_evals.llm.endpoint import PLACEHOLDER_API_KEY, Endpoint, redact
from agent_evals.llm.pricing import PriceTable
from agent_evals.llm.replies import UnusableReplyError, to_chat_response
from agent_evals.llm.retry import (
    AttemptError,
    Clock,
    Failure,
    Random,
    RetryPolicy,
    Sleep,
    call_with_retries,
)
from agent_evals.llm.types import ChatResponse, LLMConfigError, Message, ToolSpec

if TYPE_CHECKING:
    from openai import AsyncOpenAI

log = logging.getLogger(__name__)

AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"
DEFAULT_TIMEOUT_S = 60.0
_MAX_DETAIL_CHARS = 300


class OpenAIChatModel:
    """A chat model on Azure OpenAI, OpenAI or an OpenAI-compatible server.

    ``retry`` and ``timeout_s`` (per attempt) bound the time a call can take;
    ``prices`` turns token usage into cost. ``sleep``, ``clock`` and ``rng`` are for tests.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        model: str,
        *,
        retry: RetryPolicy | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        prices: PriceTable | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Clock = time.time,
        rng: Random = random.random,
    ) -> None:
        if not model:
            raise LLMConfigError("OpenAIChatModel needs a model (or Azure deployment) name")
        if timeout_s <= 0:
            raise LLMConfigError(f"timeout_s must be positive, got {timeout_s}")
        self._endpoint = endpoint
        self._model = model
        self._retry = retry or RetryPolicy()
        self._timeout_s = timeout_s
        self._prices = prices or PriceTable()
        self._sleep, self._clock, self._rng = sleep, clock, rng
        self._client: AsyncOpenAI | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @property
    def model(self) -> str:
        return self._model

    @property
    def endpoint(self) -> Endpoint:
        return self._endpoint

    @property
    def target(self) -> str:
        """What errors and logs call this model: ``model gpt-4o at host:port``."""
        return f"model {self._model} at {self._endpoint.host}"

    def __repr__(self) -> str:
        return (
            f"OpenAIChatModel(model={self._model!r}, kind={self._endpoint.kind!r}, "
            f"url={self._endpoint.display_url!r})"
        )

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        """One chat completion, retried on transient failures; raises LLMError otherwise.

        When tools are offered, ``tool_choice: "auto"`` is sent too: OpenAI's default, and
        what some OpenAI-compatible servers (llama.cpp's) need before they show the model
        the tools at all.
        """
        request: dict[str, Any] = {"model": self._model, "messages": list(messages)}
        if tools:  # an empty tools list is rejected by OpenAI, so send none
            request["tools"] = list(tools)
            request["tool_choice"] = "auto"
        if temperature is not None:
            request["temperature"] = temperature
        if max_tokens is not None:
            request["max_tokens"] = max_tokens

        async def attempt() -> ChatResponse:
            return await self._attempt(request)

        return await call_with_retries(
            attempt,
            policy=self._retry,
            target=self.target,
            sleep=self._sleep,
            clock=self._clock,
            rng=self._rng,
        )

    async def aclose(self) -> None:
        """Close the HTTP client and its keep-alive connections (the model stays usable:
        the next call opens a new client). Call it, or use ``async with model:``, before
        the event loop ends; otherwise the sockets are only freed by the garbage collector."""
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            await client.close()

    async def __aenter__(self) -> OpenAIChatModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _attempt(self, request: dict[str, Any]) -> ChatResponse:
        import openai

        client = self._client_for_running_loop()
        try:
            completion = await client.chat.completions.create(**request)
        except (openai.OpenAIError, ValueError) as exc:  # ValueError: a body that is not JSON
            raise AttemptError(self._classify(exc)) from exc
        try:
            return to_chat_response(completion, requested_model=self._model, prices=self._prices)
        except UnusableReplyError as exc:
            raise AttemptError(Failure("bad_reply", str(exc))) from None

    def _client_for_running_loop(self) -> AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = build_client(self._endpoint, timeout_s=self._timeout_s)
            self._client_loop = loop
        return self._client

    def _classify(self, exc: Exception) -> Failure:
        """Sort an SDK error (or a JSON ValueError) into a :class:`Failure` kind."""
        import openai

        secrets = self._endpoint.secrets()
        if isinstance(exc, openai.APITimeoutError):
            return Failure("timeout", f"no answer within {self._timeout_s:g} s (timeout)")
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return Failure(
                "connection", redact(f"connection failed: {type(cause).__name__}: {cause}", secrets)
            )
        if isinstance(exc, openai.APIStatusError):
            return _status_failure(exc.status_code, exc.body, dict(exc.response.headers), secrets)
        if isinstance(exc, openai.APIResponseValidationError):
            return Failure("bad_reply", redact(f"HTTP {exc.status_code}: {exc.message}", secrets))
        if not isinstance(exc, openai.OpenAIError):  # the body claimed to be JSON but did not parse
            return Failure("bad_reply", f"the body is not valid JSON ({type(exc).__name__}: {exc})")
        return Failure("rejected", redact(f"{type(exc).__name__}: {exc}", secrets))


def _status_failure(status: int, body: object, headers: dict[str, str], secrets: tuple[str, ...]) -> Failure:
    detail = redact(f"HTTP {status}: {_error_text(body)}", secrets)[:_MAX_DETAIL_CHARS]
    if status == 429:
        return Failure("rate_limited", detail, status, headers)
    if status >= 500:
        return Failure("server_error", detail, status, headers)
    if status == 408:
        return Failure("timeout", detail, status, headers)
    return Failure("rejected", detail, status, headers)


def _error_text(body: object) -> str:
    """The server's error message: ``{"error": {"message": ...}}`` or whatever it sent."""
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(message, str):
            return message
        if isinstance(error, str):
            return error
    text = str(body) if body not in (None, "") else "(empty body)"
    return " ".join(text.split())


def build_client(endpoint: Endpoint, *, timeout_s: float) -> AsyncOpenAI:
    """The SDK client for ``endpoint``, with the SDK's own retries off."""
    import openai

    common: dict[str, Any] = {"max_retries": 0, "timeout": timeout_s}
    if endpoint.kind != "azure":
        key = endpoint.api_key.reveal() if endpoint.api_key else PLACEHOLDER_API_KEY
        return openai.AsyncOpenAI(api_key=key, base_url=endpoint.url, **common)
    azure: dict[str, Any] = {"azure_endpoint": endpoint.url, "api_version": endpoint.api_version}
    if endpoint.api_key is not None:
        azure["api_key"] = endpoint.api_key.reveal()
    elif endpoint.azure_ad_token is not None:
        azure["azure_ad_token"] = endpoint.azure_ad_token.reveal()
    else:
        azure["azure_ad_token_provider"] = default_credential_token_provider()
    return openai.AsyncAzureOpenAI(**azure, **common)


def default_credential_token_provider() -> Any:
    """A bearer-token provider from ``azure-identity``'s DefaultAzureCredential (optional)."""
    try:
        from azure.identity import DefaultAzureCredential, get_bearer_token_provider
    except ImportError:
        raise LLMConfigError(
            "Azure OpenAI without AZURE_OPENAI_API_KEY or AZURE_OPENAI_AD_TOKEN needs the optional "
            "package azure-identity (pip install azure-identity) for DefaultAzureCredential"
        ) from None
    log.debug("using DefaultAzureCredential for Azure OpenAI (scope %s)", AZURE_SCOPE)
    return get_bearer_token_provider(DefaultAzureCredential(), AZURE_SCOPE)
