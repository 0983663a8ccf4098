"""A scripted, local OpenAI-compatible HTTP server: the test double for every LLM call.

:class:`ScriptedOpenAIServer` listens on ``127.0.0.1`` (a free port) in a background
thread and answers chat completions the way OpenAI and Azure OpenAI do, so the *real*
client code (the kit's model client, the openai SDK, Promptfoo providers) runs against it unchanged:

* ``POST /v1/chat/completions`` — OpenAI and OpenAI-compatible clients (use ``.base_url``);
* ``POST /openai/deployments/{deployment}/chat/completions?api-version=…`` — Azure
  clients (use ``.azure_endpoint``).

Each request becomes a :class:`ChatRequest` handed to the *responder*, a
``Callable[[ChatRequest], Reply]``; the :class:`Reply` is rendered in the real Chat
Completions shape (``id``, ``object``, ``created``, ``model``, ``choices[0].message``
with ``tool_calls``, ``finish_reason``, ``usage``). Requests are recorded
(``server.requests``, the last ``max_recorded``) so tests can check headers
(``authorization``, ``api-key``), temperature, tools or messages.

Example::

    from agent_evals.testing.scripted_openai import QueueResponder, Reply, ScriptedOpenAIServer

    script = QueueResponder({
        "agent-model": [Reply.tool_calls([("get_item", {"name": "x"})]), "The item is x."],
        "user-model": [Reply.text("Thanks!", usage=(12, 3))],
    })
    with ScriptedOpenAIServer(script) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "AGENT_MODEL": "agent-model"}
        ...                                   # run the code under test with env
        assert server.requests[0].tools       # what the client sent

Failures to script: ``Reply.error(429, headers={"Retry-After": "1"})``,
``Reply.error(500)``, ``Reply.malformed("{not json")``, ``Reply.json({"choices": []})``,
``Reply.text("slow").with_delay(2.0)`` (timeouts), malformed tool arguments
``Reply.tool_calls([("bad", "{not json")])``. Latency for benchmarks:
``fixed_latency(responder, 0.3)``. Threaded: many requests run at once (one thread per
connection), so a delay in one conversation does not hold up the others.

Runaway models: ``Reply.runaway()`` generates until the request's ``max_tokens`` (or
8000 tokens when it sends none) with ``finish_reason: "length"``;
``Reply.runaway(seconds_per_token=0.01)`` is as slow as a small model on a CPU.

**Strict mode** behaves like the picky OpenAI-compatible servers (llama.cpp's, measured:
see :mod:`agent_evals.testing.strict_mode`)::

    with ScriptedOpenAIServer(script, strict=True) as server:
        ...

It drops the tools unless the request sends a ``tool_choice`` (the responder then sees
``request.tools is None``; ``request.offered_tools`` is what was sent, and scripted tool
calls to such a request answer HTTP 500), rejects with HTTP 500 "… Input should be a
valid string …" an assistant message whose content is not a string, a tool call without
``type``, a tool without ``parameters``; and honours ``max_tokens``: a longer text (or
tool call) is cut at about ``max_tokens * 4`` characters with ``finish_reason: "length"``.

The server never checks credentials; assert on the recorded headers instead. Streaming
(``"stream": true``) is not supported and answers HTTP 400.

Concurrency: ``server.in_flight`` is the number of chat requests being answered right now and
``server.max_in_flight`` the most there ever were at once, so a test can check a client-side
cap (``LLM_MAX_IN_FLIGHT``).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from agent_evals.testing import strict_mode
from agent_evals.testing.scripted_replies import (
    CHARS_PER_TOKEN,
    ChatRequest,
    HoldAfterTool,
    QueueResponder,
    Reply,
    Responder,
    echo_responder,
    fixed_latency,
)

__all__ = [
    "ChatRequest",
    "HoldAfterTool",
    "QueueResponder",
    "Reply",
    "Responder",
    "ScriptedOpenAIServer",
    "echo_responder",
    "fixed_latency",
]

log = logging.getLogger(__name__)

OPENAI_PATH = "/v1/chat/completions"
AZURE_PATH = re.compile(r"^/openai/deployments/(?P<deployment>[^/]+)/chat/completions$")


class ScriptedOpenAIServer:
    """A local OpenAI-compatible server answering with ``responder`` (see module docstring).

    Use as a context manager, or call :meth:`start` and :meth:`stop`. ``responder`` may
    be replaced between requests (``server.responder = ...``), and so may ``strict``.
    """

    def __init__(
        self,
        responder: Responder = echo_responder,
        *,
        strict: bool = False,
        host: str = "127.0.0.1",
        max_recorded: int = 1000,
    ) -> None:
        self.responder = responder
        self.strict = strict
        self._host = host
        self._recorded: deque[ChatRequest] = deque(maxlen=max_recorded)
        self._count = 0
        self._in_flight = 0
        self._max_in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle ---------------------------------------------------------------------------
    def start(self) -> ScriptedOpenAIServer:
        if self._httpd is not None:
            raise RuntimeError("ScriptedOpenAIServer is already running")
        self._stopping.clear()
        httpd = _HTTPServer((self._host, 0), _Handler)
        httpd.scripted = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-openai", daemon=True
        )
        self._thread.start()
        log.debug("scripted OpenAI server listening at %s", self.url)
        return self

    def stop(self) -> None:
        """Stop serving; replies still waiting on a delay are sent at once."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # addresses ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        if self._httpd is None:
            raise RuntimeError("ScriptedOpenAIServer is not running; use it as a context manager")
        port = self._httpd.server_address[1]
        return f"http://{self._host}:{port}"

    @property
    def base_url(self) -> str:
        """For OpenAI clients (``OPENAI_BASE_URL``): ``http://127.0.0.1:PORT/v1``."""
        return f"{self.url}/v1"

    @property
    def azure_endpoint(self) -> str:
        """For Azure clients (``AZURE_OPENAI_ENDPOINT``): ``http://127.0.0.1:PORT``."""
        return self.url

    # recorded requests -------------------------------------------------------------------
    @property
    def requests(self) -> list[ChatRequest]:
        """The chat requests received, oldest first (at most ``max_recorded``)."""
        with self._lock:
            return list(self._recorded)

    @property
    def request_count(self) -> int:
        """All chat requests received, including those no longer recorded."""
        with self._lock:
            return self._count

    @property
    def in_flight(self) -> int:
        """Chat requests being answered now."""
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most chat requests answered at once since the start."""
        with self._lock:
            return self._max_in_flight

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def clear_requests(self) -> None:
        with self._lock:
            self._recorded.clear()

    def _record(self, make: Callable[[int], ChatRequest]) -> ChatRequest:
        with self._lock:
            request: ChatRequest = make(self._count)
            self._count += 1
            self._recorded.append(request)
        return request

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    scripted: ScriptedOpenAIServer


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

    def do_POST(self) -> None:
        parts = urlsplit(self.path)
        azure = AZURE_PATH.match(parts.path)
        if parts.path != OPENAI_PATH and azure is None:
            self._send_json(
                404,
                _error_body(
                    f"no route for POST {parts.path}; serving {OPENAI_PATH} "
                    "and /openai/deployments/{deployment}/chat/completions"
                ),
            )
            return
        body = self._read_json()
        if isinstance(body, str):
            self._send_json(400, _error_body(body))
            return
        scripted = self.server.scripted
        scripted._enter()
        try:
            strict = scripted.strict
            request = scripted._record(lambda index: _chat_request(self, parts, body, azure, index, strict))
            reply = _answer(scripted.responder, request) if strict else _call_responder(scripted.responder, request)
            if not strict:
                reply = reply.run_away(strict_mode.cap_of(body))
            scripted._wait(reply.delay_s)
        finally:
            # out of flight before the answer is written: once it is read, the client may send its next
            # request, which must not find this one still counted
            scripted._leave()
        self._send_reply(reply, request)

    def do_GET(self) -> None:
        self._send_json(404, _error_body(f"no route for GET {urlsplit(self.path).path}"))

    def _read_json(self) -> dict[str, Any] | str:
        """The JSON object body, or a message saying what is wrong with it."""
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return f"request body is not JSON: {exc}"
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return "request body must be a JSON object with a 'messages' list"
        if body.get("stream"):
            return "ScriptedOpenAIServer does not support stream=true"
        return body

    def _send_reply(self, reply: Reply, request: ChatRequest) -> None:
        if reply.raw is not None:
            self._send(reply.status, reply.raw, reply.content_type, reply.headers)
        elif reply.status != 200 or reply.message is None:
            self._send_json(reply.status, reply.body if reply.body is not None else {}, reply.headers)
        else:
            self._send_json(200, _completion(reply, request), reply.headers)

    def _send_json(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send(status, json.dumps(body).encode(), "application/json", headers or {})

    def _send(self, status: int, payload: bytes, content_type: str, headers: Mapping[str, str]) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (e.g. its timeout)
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("scripted OpenAI server: " + format, *args)


def _chat_request(
    handler: BaseHTTPRequestHandler,
    parts: Any,
    body: dict[str, Any],
    azure: re.Match[str] | None,
    index: int,
    strict: bool,
) -> ChatRequest:
    deployment = azure.group("deployment") if azure else None
    temperature = body.get("temperature")
    tools = strict_mode.visible_tools(body) if strict else body.get("tools")
    return ChatRequest(
        path=parts.path,
        model=deployment or str(body.get("model") or ""),
        messages=body["messages"],
        tools=tools if isinstance(tools, list) else None,
        temperature=float(temperature) if isinstance(temperature, int | float) else None,
        headers={name.lower(): value for name, value in handler.headers.items()},
        query=dict(parse_qsl(parts.query)),
        body=body,
        deployment=deployment,
        index=index,
        strict=strict,
    )


def _answer(responder: Responder, request: ChatRequest) -> Reply:
    """Strict mode: refuse what a picky server refuses, then cap what the responder says."""
    refused = strict_mode.rejection(request.body)
    if refused is not None:
        return refused
    reply = _call_responder(responder, request)
    cap = strict_mode.cap_of(request.body)
    reply = reply.run_away(cap)
    return strict_mode.dropped_tool_calls(request.body, reply) or strict_mode.capped(reply, cap)


def _call_responder(responder: Responder, request: ChatRequest) -> Reply:
    try:
        reply = responder(request)
    except Exception as exc:  # a broken responder becomes a visible 500, not a hung test
        log.error("scripted OpenAI responder failed on request %d", request.index, exc_info=True)
        return Reply.error(500, f"responder raised {type(exc).__name__}: {exc}")
    if not isinstance(reply, Reply):
        return Reply.error(500, f"responder returned {type(reply).__name__}, expected Reply")
    return reply


def _completion(reply: Reply, request: ChatRequest) -> dict[str, Any]:
    """The Chat Completions body for a 200 reply."""
    message = dict(reply.message or {})
    if message.get("tool_calls"):
        message["tool_calls"] = [
            {**call, "id": call.get("id") or f"call_{request.index}_{position}"}
            for position, call in enumerate(message["tool_calls"])
        ]
    return {
        "id": f"chatcmpl-scripted-{request.index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model or request.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish_reason}],
        "usage": _usage(reply.usage, request, message),
    }


def _usage(scripted: Mapping[str, int] | None, request: ChatRequest, message: Mapping[str, Any]) -> dict[str, int]:
    """The scripted usage, what it leaves out estimated (:func:`_estimated_usage`)."""
    if scripted is not None and "total_tokens" in scripted:
        return dict(scripted)
    usage = {**_estimated_usage(request, message), **(scripted or {})}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


def _estimated_usage(request: ChatRequest, message: Mapping[str, Any]) -> dict[str, int]:
    """Roughly 4 characters per token, at least 1: deterministic, good enough for cost sums."""
    prompt = max(1, len(json.dumps(request.messages)) // CHARS_PER_TOKEN)
    completion = max(1, len(json.dumps([message.get("content"), message.get("tool_calls")])) // CHARS_PER_TOKEN)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _error_body(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
