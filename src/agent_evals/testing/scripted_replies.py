"""What the scripted OpenAI-compatible server receives (:class:`ChatRequest`) and sends (:class:`Reply`).

A *responder* is any ``Callable[[ChatRequest], Reply]``. Ready-made ones:
:func:`echo_responder` (the default), :class:`QueueResponder` (scripted replies per
model, in order), :func:`fixed_latency` (adds a delay to another responder) and
:class:`HoldAfterTool` (holds the reply that follows a given tool's result until released).
Re-exported by :mod:`agent_evals.testing.scripted_openai`; see its docstring for examples.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

Message = dict[str, Any]
ToolArguments = Mapping[str, Any] | str
ToolCallSpec = tuple[str, ToolArguments] | tuple[str, ToolArguments, str]
UsageSpec = tuple[int, int] | Mapping[str, int]

#: How the scripted server counts tokens: about 4 characters each (usage estimates, caps).
CHARS_PER_TOKEN = 4
#: How long a runaway reply runs when the request sets no cap (a small model that never stops).
RUNAWAY_TOKENS = 8000
RUNAWAY_TEXT = "and so on, "


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completions request as the server saw it."""

    path: str
    model: str
    """The ``model`` of the body, or for the Azure path the deployment name."""
    messages: list[Message]
    tools: list[dict[str, Any]] | None
    temperature: float | None
    headers: Mapping[str, str]
    """Header names are lower-case: ``request.headers["authorization"]``, ``["api-key"]``."""
    query: Mapping[str, str]
    body: Mapping[str, Any]
    deployment: str | None = None
    """Set for ``/openai/deployments/{deployment}/chat/completions`` (Azure)."""
    index: int = 0
    """0-based order of arrival at the server."""
    strict: bool = False
    """Served in strict mode: ``tools`` are then the tools the model was shown (see ``strict_mode``)."""

    @property
    def is_azure(self) -> bool:
        return self.deployment is not None

    @property
    def api_version(self) -> str | None:
        return self.query.get("api-version")

    @property
    def last_user_message(self) -> str | None:
        """The text of the last ``user`` message, if any."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                content = message.get("content")
                return content if isinstance(content, str) else json.dumps(content)
        return None

    @property
    def max_tokens(self) -> int | None:
        """The ``max_tokens`` the client sent, if any."""
        value = self.body.get("max_tokens")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def tool_choice(self) -> Any:
        """The ``tool_choice`` the client sent (None when it sent none)."""
        return self.body.get("tool_choice")

    @property
    def offered_tools(self) -> list[dict[str, Any]] | None:
        """The tools the client sent (in strict mode the model may not have been shown them)."""
        tools = self.body.get("tools")
        return tools if isinstance(tools, list) else None

    @property
    def tool_names(self) -> list[str]:
        return [t.get("function", {}).get("name", "") for t in self.tools or []]


@dataclass(frozen=True)
class Reply:
    """What to answer; build it with :meth:`text`, :meth:`tool_calls`, :meth:`error`,
    :meth:`malformed`, :meth:`json` or :meth:`runaway`, and slow it down with :meth:`with_delay`."""

    status: int = 200
    message: Message | None = None
    finish_reason: str | None = "stop"
    usage: Mapping[str, int] | None = None
    body: Any = None
    raw: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    delay_s: float = 0.0
    model: str | None = None
    runaway_tokens: int | None = None
    """Set by :meth:`runaway`: generate this many tokens unless the request's cap is lower."""
    seconds_per_token: float = 0.0

    @classmethod
    def text(
        cls,
        content: str,
        *,
        usage: UsageSpec | None = None,
        finish_reason: str = "stop",
        model: str | None = None,
        delay_s: float = 0.0,
    ) -> Reply:
        """An assistant text answer. ``usage`` = ``(prompt, completion)`` or a usage dict;
        when omitted it is estimated as characters / 4."""
        message = {"role": "assistant", "content": content}
        return cls(
            message=message, finish_reason=finish_reason, usage=_usage(usage), model=model, delay_s=delay_s
        )

    @classmethod
    def tool_calls(
        cls,
        calls: Sequence[ToolCallSpec],
        *,
        content: str | None = None,
        usage: UsageSpec | None = None,
        model: str | None = None,
        delay_s: float = 0.0,
    ) -> Reply:
        """Tool calls: ``[(name, args), ...]`` or ``(name, args, call_id)``. Dict ``args`` are
        JSON-encoded; ``str`` args are sent untouched (use them for malformed JSON).
        Ids default to ``call_<request index>_<position>``."""
        encoded = []
        for spec in calls:
            name, args = spec[0], spec[1]
            call_id = spec[2] if len(spec) > 2 else None
            arguments = args if isinstance(args, str) else json.dumps(dict(args))
            encoded.append(
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            )
        message = {"role": "assistant", "content": content, "tool_calls": encoded}
        return cls(
            message=message, finish_reason="tool_calls", usage=_usage(usage), model=model, delay_s=delay_s
        )

    @classmethod
    def error(
        cls,
        status: int,
        body: str | Mapping[str, Any] | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        delay_s: float = 0.0,
    ) -> Reply:
        """An HTTP error. ``body``: a message (wrapped as ``{"error": {"message": ...}}``),
        a full JSON object, or None for a default message. ``headers`` e.g. ``{"Retry-After": "1"}``."""
        if body is None:
            body = f"scripted error (HTTP {status})"
        if isinstance(body, str):
            body = {"error": {"message": body, "type": "scripted_error", "param": None, "code": str(status)}}
        return cls(status=status, body=dict(body), headers=dict(headers or {}), delay_s=delay_s)

    @classmethod
    def malformed(
        cls,
        raw_body: str | bytes,
        *,
        status: int = 200,
        content_type: str = "application/json",
        delay_s: float = 0.0,
    ) -> Reply:
        """Exactly ``raw_body`` (e.g. ``"{not json"`` or an HTML page) with ``content_type``."""
        raw = raw_body.encode() if isinstance(raw_body, str) else raw_body
        return cls(status=status, raw=raw, content_type=content_type, delay_s=delay_s)

    @classmethod
    def json(cls, body: Any, *, status: int = 200, headers: Mapping[str, str] | None = None) -> Reply:
        """Any JSON body verbatim, e.g. ``Reply.json({"choices": []})``."""
        return cls(status=status, raw=json.dumps(body).encode(), headers=dict(headers or {}))

    @classmethod
    def runaway(
        cls,
        text: str = "Sure, let me explain in detail: ",
        *,
        tokens: int = RUNAWAY_TOKENS,
        seconds_per_token: float = 0.0,
        model: str | None = None,
    ) -> Reply:
        """A reply that does not stop: ``text`` followed by filler until the request's
        ``max_tokens`` (honoured in every mode), or ``tokens`` when it sends none, with
        ``finish_reason: "length"``. ``seconds_per_token`` makes it as slow as a real model."""
        if tokens < 1:
            raise ValueError(f"a runaway reply needs at least 1 token, got {tokens}")
        return cls(
            message={"role": "assistant", "content": text},
            finish_reason="length",
            model=model,
            runaway_tokens=tokens,
            seconds_per_token=seconds_per_token,
        )

    def run_away(self, cap: int | None) -> Reply:
        """This runaway reply generated up to ``cap`` tokens (or its own length without a cap)."""
        if self.runaway_tokens is None or self.message is None:
            return self
        tokens = min(cap, self.runaway_tokens) if cap is not None else self.runaway_tokens
        start = str(self.message.get("content") or "")[: tokens * CHARS_PER_TOKEN]
        filler = RUNAWAY_TEXT * (tokens * CHARS_PER_TOKEN // len(RUNAWAY_TEXT) + 1)
        content = (start + filler)[: tokens * CHARS_PER_TOKEN]
        usage = {"completion_tokens": tokens}  # the server adds its prompt estimate
        return replace(
            self,
            message={**self.message, "content": content},
            usage=usage,
            runaway_tokens=None,
            delay_s=self.delay_s + tokens * self.seconds_per_token,
        )

    def with_delay(self, seconds: float) -> Reply:
        """The same reply, sent after ``seconds``."""
        return replace(self, delay_s=seconds)


Responder = Callable[[ChatRequest], Reply]
_NO_RETRY = {"x-should-retry": "false"}
ReplyLike = Reply | str


def echo_responder(request: ChatRequest) -> Reply:
    """Answers ``echo: <last user message>`` (the server's default responder)."""
    return Reply.text(f"echo: {request.last_user_message or ''}")


def fixed_latency(responder: Responder, seconds: float) -> Responder:
    """Wrap ``responder`` so every reply comes ``seconds`` later (added to its own delay)."""

    def delayed(request: ChatRequest) -> Reply:
        reply = responder(request)
        return reply.with_delay(reply.delay_s + seconds)

    return delayed


class HoldAfterTool:
    """Wrap ``responder``: a request whose last message is the result of ``tool`` is held until
    :meth:`release` (or ``limit_s``), and :attr:`held` is set when the first one arrives.

    A test that must act while the tool's side effect exists (a pull request open, the row still
    in flight) waits on :attr:`held` instead of polling for the side effect in a window that a
    busy machine can miss.
    """

    def __init__(self, responder: Responder, tool: str, *, limit_s: float = 300.0) -> None:
        self._responder = responder
        self._tool = tool
        self._limit_s = limit_s
        self.held = threading.Event()
        self._released = threading.Event()

    def __call__(self, request: ChatRequest) -> Reply:
        if _answers_tool(request.messages, self._tool):
            self.held.set()
            self._released.wait(self._limit_s)
        return self._responder(request)

    def release(self) -> None:
        self._released.set()


def _answers_tool(messages: Sequence[Message], tool: str) -> bool:
    """Whether the last message is a tool result of a call to ``tool``."""
    if not messages or messages[-1].get("role") != "tool":
        return False
    call_id = messages[-1].get("tool_call_id")
    for message in reversed(messages):
        for call in message.get("tool_calls") or ():
            if call.get("id") == call_id:
                return bool((call.get("function") or {}).get("name") == tool)
    return False


class QueueResponder:
    """Scripted replies popped in order, one queue per model (thread-safe).

    ``QueueResponder({"agent-model": [Reply.tool_calls(...), "done"], "user-model": [...]})``;
    a plain ``str`` is ``Reply.text``. A list instead of a mapping (or the key ``"*"``)
    serves any model. An empty or missing queue answers HTTP 500 with a message naming
    the model, so a test that asks for more than it scripted fails clearly (with
    ``x-should-retry: false``, so clients that honour it do not retry a finished script).
    """

    ANY_MODEL = "*"

    def __init__(self, replies: Mapping[str, Sequence[ReplyLike]] | Sequence[ReplyLike]) -> None:
        if not isinstance(replies, Mapping):
            replies = {self.ANY_MODEL: replies}
        self._queues = {model: deque(_as_reply(r) for r in queue) for model, queue in replies.items()}
        self._served: dict[str, int] = {model: 0 for model in self._queues}
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Reply:
        key = request.model if request.model in self._queues else self.ANY_MODEL
        with self._lock:
            queue = self._queues.get(key)
            if queue is None:
                known = ", ".join(sorted(self._queues)) or "none"
                message = f"QueueResponder: no queue for model {request.model!r} (queues: {known})"
                return Reply.error(500, message, headers=_NO_RETRY)
            if not queue:
                served = self._served[key]
                message = (
                    f"QueueResponder: no scripted reply left for model {request.model!r} ({served} served)"
                )
                return Reply.error(500, message, headers=_NO_RETRY)
            self._served[key] += 1
            return queue.popleft()

    def remaining(self) -> dict[str, int]:
        """Replies not yet served, per queue."""
        with self._lock:
            return {model: len(queue) for model, queue in self._queues.items()}

    def served(self) -> dict[str, int]:
        """Replies served so far, per queue."""
        with self._lock:
            return dict(self._served)


def _as_reply(item: ReplyLike) -> Reply:
    return Reply.text(item) if isinstance(item, str) else item


def _usage(usage: UsageSpec | None) -> dict[str, int] | None:
    if usage is None:
        return None
    if isinstance(usage, tuple):
        prompt, completion = usage
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    result = dict(usage)
    result.setdefault("total_tokens", result.get("prompt_tokens", 0) + result.get("completion_tokens", 0))
    return result
