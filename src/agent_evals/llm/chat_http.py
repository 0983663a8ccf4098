"""Chat completions over HTTP: the one route of the OpenAI API the kit uses, on ``httpx2``.

The kit sends one request shape (:func:`agent_evals.llm.chat_request.build_request`, plain JSON)
and reads one reply shape (:mod:`agent_evals.llm.replies`), so it needs none of the openai SDK:
importing that SDK costs ~0.25 s of CPU in every process (its package loads the types of every
OpenAI API), which each Python worker Promptfoo starts cold pays before its first model call.
``httpx2`` is the HTTP client the MCP SDK brings (and the one the openai SDK is built on).

What the SDK did and this keeps, for the three endpoint kinds (:class:`~agent_evals.llm.endpoint.Endpoint`):

* the URL: ``{base_url}/chat/completions``; on Azure
  ``{endpoint}/openai/deployments/{model}/chat/completions`` with ``api-version`` in the query (the
  model name is the deployment);
* the credential: ``Authorization: Bearer`` with the key (a placeholder for a compatible server
  without one); on Azure an ``api-key`` header, an Entra ID bearer token, or one from a token
  provider asked before every request (it caches and refreshes the token itself);
* redirects followed, proxies from the environment, one timeout for every phase of a request;
* an answer that is not 2xx is a :class:`StatusError` with its status, headers and body (JSON when
  it parses, else the text); a 2xx body is parsed as JSON when its content type says JSON (a
  ValueError when it is not), else parsed if it can be, else returned as text.

Transport failures stay ``httpx2`` exceptions (``TimeoutException``, ``TransportError``):
:func:`agent_evals.llm.server_errors.classify` sorts them.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from agent_evals.llm.endpoint import PLACEHOLDER_API_KEY, Endpoint
from agent_evals.llm.tls import ssl_context

if TYPE_CHECKING:
    import httpx2

__all__ = ["ChatClient", "StatusError", "TokenProvider"]

TokenProvider = Callable[[], Any]  # returns the bearer token (str), or an awaitable of it
USER_AGENT = "agent-evals"


class StatusError(Exception):
    """The server answered with an error status: what it said, as it said it."""

    def __init__(self, status: int, body: object, headers: dict[str, str]) -> None:
        super().__init__(f"HTTP {status}")
        self.status, self.body, self.headers = status, body, headers


class ChatClient:
    """Posts chat completion requests to one endpoint, on one HTTP client (bound to the event loop
    that first uses it, as every ``httpx2.AsyncClient`` is). ``token_provider``: an Azure endpoint's
    bearer tokens, when it has neither key nor token."""

    def __init__(
        self, endpoint: Endpoint, *, timeout_s: float, token_provider: TokenProvider | None = None
    ) -> None:
        import httpx2  # lazy: loads httpx2 only when used (start-up time)

        self._endpoint = endpoint
        self._token_provider = token_provider
        self._headers = {
            "Accept": "application/json", "Content-Type": "application/json", "User-Agent": USER_AGENT,
        }
        self._headers.update(_fixed_credential(endpoint))
        self._http = httpx2.AsyncClient(verify=ssl_context(), timeout=timeout_s, follow_redirects=True)

    def url(self, model: str) -> tuple[str, dict[str, str]]:
        """Where a request for ``model`` goes: the URL and its query parameters."""
        if self._endpoint.kind == "azure":
            path = f"{self._endpoint.url}/openai/deployments/{quote(model, safe='')}/chat/completions"
            return path, {"api-version": self._endpoint.api_version or ""}
        return f"{self._endpoint.url}/chat/completions", {}

    async def create(self, request: dict[str, Any]) -> Any:
        """Send ``request``; the reply's body (see the module's docstring), or StatusError."""
        url, params = self.url(str(request.get("model", "")))
        headers = self._headers
        if self._token_provider is not None:
            token = self._token_provider()
            if inspect.isawaitable(token):
                token = await token
            headers = {**headers, "Authorization": f"Bearer {token}"}
        response = await self._http.post(url, params=params, headers=headers, content=_encoded(request))
        if not response.is_success:
            raise StatusError(response.status_code, _error_body(response), dict(response.headers))
        return _success_body(response)

    async def aclose(self) -> None:
        await self._http.aclose()


def _encoded(request: dict[str, Any]) -> bytes:
    """The body as the SDK's HTTP client encodes JSON: compact, UTF-8, no NaN (a ValueError)."""
    return json.dumps(request, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _fixed_credential(endpoint: Endpoint) -> dict[str, str]:
    """The credential header that is the same for every request (none for a token provider)."""
    if endpoint.kind != "azure":
        key = endpoint.api_key.reveal() if endpoint.api_key else PLACEHOLDER_API_KEY
        return {"Authorization": f"Bearer {key}"}
    if endpoint.api_key is not None:
        return {"api-key": endpoint.api_key.reveal()}
    if endpoint.azure_ad_token is not None:
        return {"Authorization": f"Bearer {endpoint.azure_ad_token.reveal()}"}
    return {}


def _error_body(response: httpx2.Response) -> object:
    text = response.text.strip()
    try:
        return json.loads(text)
    except ValueError:
        return text


def _success_body(response: httpx2.Response) -> Any:
    content_type = response.headers.get("content-type", "*").split(";")[0].strip()
    if content_type.endswith("json"):
        return json.loads(response.content)  # ValueError: the body claimed to be JSON but did not parse
    try:
        return json.loads(response.content)
    except ValueError:
        return response.text
