"""`OpenAIChatModel`: the :class:`~agent_evals.llm.types.ChatModel` of the OpenAI chat completions API.

One class serves the three endpoint kinds (:class:`~agent_evals.llm.endpoint.Endpoint`): Azure
OpenAI (the model name is the deployment: ``/openai/deployments/{model}/chat/completions?api-version=…``),
OpenAI, and OpenAI-compatible servers at a ``base_url``. The HTTP side is
:class:`~agent_evals.llm.chat_http.ChatClient` (no SDK: see there why).

Nothing is retried below this class; :mod:`agent_evals.llm.retry` does it, so each retry is
logged and tests can inject the sleep and the clock. The HTTP client is made on the first call,
so importing this module stays cheap.

The HTTP client is bound to the event loop it was created on; the model makes a new one
when it is used from another loop (e.g. each ``asyncio.run`` of a Promptfoo provider).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from agent_evals.llm.budget import BudgetLedger, BudgetSpent, first_spent, said_budget_exceeded
from agent_evals.llm.endpoint import Endpoint
from agent_evals.llm.in_flight import InFlightLimit
from agent_evals.llm.pricing import PriceTable
from agent_evals.llm.replies import UnusableReplyError, to_chat_response
from agent_evals.llm.chat_request import DEFAULT_TOOL_CHOICE, CapParameter, ToolChoice, build_request, check_tool_choice
from agent_evals.llm.retry import (
    AttemptError,
    Clock,
    Failure,
    Random,
    RetryPolicy,
    Sleep,
    Target,
    call_with_retries,
)
from agent_evals.llm.server_errors import classify
from agent_evals.llm.types import ChatResponse, LLMConfigError, LLMError, Message, Role, ToolSpec

if TYPE_CHECKING:
    from agent_evals.llm.chat_http import ChatClient

log = logging.getLogger(__name__)

AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"
DEFAULT_TIMEOUT_S = 60.0


class OpenAIChatModel:
    """A chat model on Azure OpenAI, OpenAI or an OpenAI-compatible server.

    ``retry`` and ``timeout_s`` (per attempt) bound the time a call can take;
    ``max_tokens`` is the completion cap of every request that does not pass its own;
    ``tool_choice`` is sent whenever tools are offered (``omit``: none is sent);
    ``prices`` turns token usage into cost. ``sleep``, ``clock`` and ``rng`` are for tests.

    The request shape is :func:`agent_evals.llm.chat_request.build_request`. An OpenAI model
    that refuses ``max_tokens`` (the reasoning models want ``max_completion_tokens``) gets
    the cap under that name from then on, without spending an attempt.

    ``in_flight`` holds a slot of the endpoint's cross-process semaphore while a request is out
    (:mod:`agent_evals.llm.in_flight`); with ``budget`` ledgers, each request is sent only while
    no limit is reached, and its cost is added to every ledger under ``role``
    (:mod:`agent_evals.llm.budget`).
    """

    def __init__(
        self,
        endpoint: Endpoint,
        model: str,
        *,
        retry: RetryPolicy | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        prices: PriceTable | None = None,
        max_tokens: int | None = None,
        tool_choice: ToolChoice = DEFAULT_TOOL_CHOICE,
        role: Role = "agent",
        budget: tuple[BudgetLedger, ...] = (),
        in_flight: InFlightLimit | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Clock = time.time,
        rng: Random = random.random,
    ) -> None:
        if not model:
            raise LLMConfigError("OpenAIChatModel needs a model (or Azure deployment) name")
        if timeout_s <= 0:
            raise LLMConfigError(f"timeout_s must be positive, got {timeout_s}")
        if max_tokens is not None and max_tokens < 1:
            raise LLMConfigError(f"max_tokens must be at least 1, got {max_tokens}")
        try:
            self._tool_choice = check_tool_choice(tool_choice)
        except ValueError as exc:
            raise LLMConfigError(str(exc)) from None
        self._max_tokens = max_tokens
        self._cap_parameter: CapParameter = "max_tokens"
        self._endpoint = endpoint
        self._model = model
        self._retry = retry or RetryPolicy()
        self._timeout_s = timeout_s
        self._prices = prices or PriceTable()
        self._sleep, self._clock, self._rng = sleep, clock, rng
        self._role, self._budget, self._in_flight = role, budget, in_flight
        self._client: ChatClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @property
    def model(self) -> str:
        return self._model

    @property
    def endpoint(self) -> Endpoint:
        return self._endpoint

    @property
    def max_tokens(self) -> int | None:
        """The completion cap of requests that do not pass their own."""
        return self._max_tokens

    @property
    def target(self) -> Target:
        """What errors and logs call this model: ``model gpt-4o at host:port``."""
        return Target(self._model, self._endpoint.host)

    def __repr__(self) -> str:
        return (
            f"OpenAIChatModel(model={self._model!r}, kind={self._endpoint.kind!r}, "
            f"url={self._endpoint.display_url!r}, max_tokens={self._max_tokens!r})"
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

        ``max_tokens`` (when given) replaces the model's own cap for this request.
        """
        request = build_request(
            self._model,
            messages,
            tools=tools,
            temperature=temperature,
            max_tokens=self._max_tokens if max_tokens is None else max_tokens,
            tool_choice=self._tool_choice,
        )

        async def attempt() -> ChatResponse:
            async with self._slot():
                self._check_budget()
                response = await self._attempt(request)
            for ledger in self._budget:
                ledger.add(self._role, response.usage)
            return response

        try:
            return await call_with_retries(
                attempt,
                policy=self._retry,
                target=self.target,
                sleep=self._sleep,
                clock=self._clock,
                rng=self._rng,
            )
        except BudgetSpent:
            raise
        except LLMError as exc:
            if type(exc) is LLMError and said_budget_exceeded(str(exc)):  # a gateway's budget (per key)
                raise BudgetSpent(f"the gateway refused: its budget for this key is spent: {exc}") from None
            raise

    def _slot(self) -> AbstractAsyncContextManager[object]:
        return self._in_flight.slot() if self._in_flight is not None else nullcontext()

    def _check_budget(self) -> None:
        if not self._budget:
            return
        if self._prices.price_for(self._model) is None:
            raise LLMConfigError(
                f"the {self._role} model {self._model} has no known price, so the run's budget cannot be "
                f"enforced: give it one in LLM_PRICES, e.g. LLM_PRICES='{{\"{self._model}\": [2.5, 10.0]}}' "
                "(USD per 1M input and output tokens)"
            )
        first_spent(self._budget, self._role, self._model)

    async def aclose(self) -> None:
        """Close the HTTP client and its keep-alive connections (the model stays usable:
        the next call opens a new client). Call it, or use ``async with model:``, before
        the event loop ends; otherwise the sockets are only freed by the garbage collector."""
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            await client.aclose()

    async def __aenter__(self) -> OpenAIChatModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _attempt(self, request: dict[str, Any]) -> ChatResponse:
        import httpx2  # lazy: loads httpx2 only when used (start-up time)

        from agent_evals.llm.chat_http import StatusError  # lazy: with httpx2

        client = self._client_for_running_loop()
        request = self._with_cap_parameter(request)
        try:
            try:
                completion = await client.create(request)
            except StatusError as exc:
                if exc.status != 400 or not _wants_max_completion_tokens(exc) or "max_tokens" not in request:
                    raise
                log.info("%s refuses max_tokens; sending max_completion_tokens from now on", self.target)
                self._cap_parameter = "max_completion_tokens"
                completion = await client.create(self._with_cap_parameter(request))
        except (StatusError, httpx2.HTTPError, ValueError) as exc:  # ValueError: a body that is not JSON
            raise AttemptError(classify(exc, self._endpoint, timeout_s=self._timeout_s)) from exc
        try:
            return to_chat_response(completion, requested_model=self._model, prices=self._prices)
        except UnusableReplyError as exc:
            raise AttemptError(Failure("bad_reply", str(exc))) from None

    def _with_cap_parameter(self, request: dict[str, Any]) -> dict[str, Any]:
        if self._cap_parameter == "max_tokens" or "max_tokens" not in request:
            return request
        renamed = dict(request)
        renamed["max_completion_tokens"] = renamed.pop("max_tokens")
        return renamed

    def _client_for_running_loop(self) -> ChatClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = build_client(self._endpoint, timeout_s=self._timeout_s)
            self._client_loop = loop
        return self._client


def _wants_max_completion_tokens(exc: Exception) -> bool:
    """OpenAI's answer for reasoning models: "Unsupported parameter: 'max_tokens' … Use 'max_completion_tokens'"."""
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return isinstance(message, str) and "max_tokens" in message and "max_completion_tokens" in message


def build_client(endpoint: Endpoint, *, timeout_s: float) -> ChatClient:
    """The HTTP client for ``endpoint`` (on the process's one TLS context: building one loads the CA
    bundle, ~20 ms of CPU per client, two clients per conversation)."""
    from agent_evals.llm.chat_http import ChatClient  # lazy: loads httpx2 only when used (start-up time)

    provider = default_credential_token_provider() if endpoint.azure_auth == "default_credential" else None
    return ChatClient(endpoint, timeout_s=timeout_s, token_provider=provider)


def default_credential_token_provider() -> Any:
    """A bearer-token provider from ``azure-identity``'s DefaultAzureCredential (optional)."""
    try:
        from azure.identity import DefaultAzureCredential, get_bearer_token_provider  # lazy: loads azure only when used (start-up time)
    except ImportError:
        raise LLMConfigError(
            "Azure OpenAI without AZURE_OPENAI_API_KEY or AZURE_OPENAI_AD_TOKEN needs the optional "
            "package azure-identity (pip install azure-identity) for DefaultAzureCredential"
        ) from None
    log.debug("using DefaultAzureCredential for Azure OpenAI (scope %s)", AZURE_SCOPE)
    return get_bearer_token_provider(DefaultAzureCredential(), AZURE_SCOPE)
