"""What a failed call means, in one line: :func:`classify` sorts an HTTP error into a
:class:`~agent_evals.llm.retry.Failure` with the server's own words (shortened) and a hint.

* An HTTP answer keeps its status and what the server said: ``{"error": {"message": …}}``,
  else the body; a pydantic validation dump (llama.cpp answers HTTP 500 with seven of
  them for one null ``content``) is cut down to its count and the errors that matter:
  ``7 validation errors, e.g. messages[1].content: Input should be a valid string``.
* Hints for common mistakes: a 404 from an OpenAI-compatible base URL without ``/v1``,
  401/403 (which key to check), a request too long for the model's context, a refused
  connection (is the server running?), an unknown host, a timeout.

Secrets are redacted from everything the server sent back.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agent_evals.llm.endpoint import Endpoint, redact
from agent_evals.llm.retry import Failure

if TYPE_CHECKING:
    import httpx2

MAX_SERVER_TEXT = 200
_VALIDATION_COUNT = re.compile(r"(\d+) validation errors?")
_VALIDATION_ENTRY = re.compile(
    r"'type': '(?P<type>[^']+)', 'loc': \((?P<loc>[^)]*)\), 'msg': (?P<q>['\"])(?P<msg>.*?)(?P=q)"
)
_DISCRIMINATOR_TYPES = frozenset({"literal_error", "missing"})  # which union member: noise
_MAX_VALIDATION_SHOWN = 2

TIMEOUT_HINT = (
    "a slow model: raise LLM_TIMEOUT_S, or lower the role's completion cap "
    "(LLM_MAX_TOKENS_AGENT, LLM_MAX_TOKENS_USER, LLM_MAX_TOKENS_JUDGE)"
)
CONTEXT_HINT = (
    "the conversation and the completion cap do not fit the model's context window: "
    "lower the cap or use a model (or server setting) with a larger context"
)


def classify(exc: Exception, endpoint: Endpoint, *, timeout_s: float) -> Failure:
    """Sort a failed request (:class:`~agent_evals.llm.chat_http.StatusError`, an ``httpx2`` error,
    or a JSON ValueError) into a :class:`Failure` kind, with a hint."""
    import httpx2  # lazy: loads httpx2 only when used (start-up time)

    from agent_evals.llm.chat_http import StatusError  # lazy: with httpx2

    if isinstance(exc, httpx2.TimeoutException):
        return Failure("timeout", f"no answer within {timeout_s:g} s (timeout)", hint=TIMEOUT_HINT)
    if isinstance(exc, httpx2.HTTPError):
        return _connection_failure(exc, endpoint)
    if isinstance(exc, StatusError):
        return status_failure(exc.status, exc.body, exc.headers, endpoint)
    if isinstance(exc, ValueError):  # the body claimed to be JSON but did not parse
        return Failure("bad_reply", f"the body is not valid JSON ({type(exc).__name__}: {exc})")
    return Failure("rejected", redact(f"{type(exc).__name__}: {exc}", endpoint.secrets()))


def status_failure(status: int, body: object, headers: dict[str, str], endpoint: Endpoint) -> Failure:
    """An HTTP error answer: retried or not by status, what the server said, a hint."""
    text = shorten(summarize(redact(error_text(body), endpoint.secrets())))
    hint = status_hint(status, text, endpoint)
    if status == 429:
        return Failure("rate_limited", text, status, headers, hint)
    if status >= 500:
        return Failure("server_error", text, status, headers, hint)
    if status == 408:
        return Failure("timeout", text, status, headers, hint)
    return Failure("rejected", text, status, headers, hint)


def status_hint(status: int, text: str, endpoint: Endpoint) -> str:
    """What to check for a status, or ""."""
    if status == 404:
        return _not_found_hint(endpoint)
    if status in (401, 403):
        return _auth_hint(endpoint)
    if "context length" in text.lower() or "context_length" in text.lower() or "context window" in text.lower():
        return CONTEXT_HINT
    return ""


def _not_found_hint(endpoint: Endpoint) -> str:
    if endpoint.kind == "compatible" and not endpoint.url.rstrip("/").endswith("/v1"):
        return f"check that OPENAI_BASE_URL ends with /v1 (it is {endpoint.display_url})"
    if endpoint.kind == "azure":
        return "check the deployment name (on Azure the model name is the deployment) and AZURE_OPENAI_ENDPOINT"
    return "check the model name (AGENT_MODEL, USER_MODEL, JUDGE_MODEL) and the base URL"


def _auth_hint(endpoint: Endpoint) -> str:
    if endpoint.kind == "azure":
        if endpoint.azure_auth == "default_credential":
            return "check the Azure identity's role on the resource (Cognitive Services OpenAI User)"
        return "check AZURE_OPENAI_API_KEY or AZURE_OPENAI_AD_TOKEN (and that it belongs to this resource)"
    if endpoint.api_key is None:
        return "the server wants a key: set OPENAI_API_KEY"
    return "check OPENAI_API_KEY"


def _connection_failure(exc: httpx2.HTTPError, endpoint: Endpoint) -> Failure:
    detail = redact(f"{type(exc).__name__}: {exc}", endpoint.secrets())
    chain = _causes(exc)
    lowered = " ".join(str(c) for c in chain).lower()
    variable = "AZURE_OPENAI_ENDPOINT" if endpoint.kind == "azure" else "OPENAI_BASE_URL"
    if any(isinstance(c, ConnectionRefusedError) for c in chain) or "connection refused" in lowered:
        return Failure("connection", "connection refused", hint=f"is the model server running at {endpoint.display_url}?")
    if "name or service not known" in lowered or "nodename nor servname" in lowered or "getaddrinfo" in lowered:
        return Failure("connection", f"unknown host ({detail})", hint=f"check the host name in {variable}")
    return Failure("connection", f"connection failed: {detail}")


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it (httpx2 wraps httpcore2, which wraps the OS error)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def error_text(body: object) -> str:
    """The server's error message: ``{"error": {"message": ...}}`` or whatever it sent."""
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(message, str) and message.strip():
            return message
        if isinstance(error, str) and error.strip():
            return error
    return str(body) if body not in (None, "", {}) else "(empty body)"


def summarize(text: str) -> str:
    """A pydantic validation dump cut to its count and the errors that matter; else ``text``."""
    entries = list(_VALIDATION_ENTRY.finditer(text))
    if not entries:
        return text
    relevant = [e for e in entries if e["type"] not in _DISCRIMINATOR_TYPES] or entries
    shown = list(dict.fromkeys(f"{_location(e['loc'])}: {e['msg']}" for e in relevant))[:_MAX_VALIDATION_SHOWN]
    count = _VALIDATION_COUNT.search(text)
    head = f"{count[1]} validation errors" if count and count[1] != "1" else "validation error"
    return f"{head}, e.g. {'; '.join(shown)}"


def _location(loc: str) -> str:
    """``('body', 'messages', 1, 'ChatCompletionRequestAssistantMessage', 'content')`` → ``messages[1].content``."""
    path = ""
    for raw in (part.strip().strip("'\"") for part in loc.split(",")):
        if not raw or raw == "body" or raw[:1].isupper():
            continue
        path += f"[{raw}]" if raw.isdigit() else (f".{raw}" if path else raw)
    return path or "body"


def shorten(text: str, limit: int = MAX_SERVER_TEXT) -> str:
    """One line of at most ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
