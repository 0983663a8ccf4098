"""Test support for the assertion tests: metadata builders and a stub portal (stdlib HTTP server)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent_evals.contract import CONTRACT_VERSION, PROVIDER_MARKER_KEY


def call(
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    turn: int = 1,
    is_error: bool = False,
    result: Any = None,
    raw: str | None = None,
) -> dict[str, Any]:
    """A ToolCallRecord; ``arguments=None`` with ``raw`` models unparsable arguments."""
    args = {} if arguments is None and raw is None else arguments
    return {
        "name": name,
        "arguments": args,
        "raw_arguments": raw if raw is not None else json.dumps(args),
        "result": result if result is not None else ({"error": "failed"} if is_error else {"ok": True}),
        "is_error": is_error,
        "turn": turn,
    }


def metadata(
    calls: list[dict[str, Any]] | None = None,
    *,
    replies: list[str] | None = None,
    pull_requests: list[int] | None = None,
    turns: int = 1,
    end: str = "done",
    base_url: str = "http://127.0.0.1:8400",
    **extra: Any,
) -> dict[str, Any]:
    """RunMetadata with the agent_evals marker; ``replies`` become assistant transcript entries."""
    replies = replies if replies is not None else ["Done."]
    transcript: list[dict[str, Any]] = []
    for turn, reply in enumerate(replies, start=1):
        transcript.append({"role": "user", "content": f"request {turn}", "turn": turn, "tool_calls": []})
        transcript.append({"role": "assistant", "content": reply, "turn": turn, "tool_calls": []})
    data: dict[str, Any] = {
        PROVIDER_MARKER_KEY: CONTRACT_VERSION,
        "tool_calls": calls or [],
        "transcript": transcript,
        "pull_requests": [
            {"id": pr, "url": f"{base_url}/repos/spokes/pullrequest/{pr}"} for pr in (pull_requests or [])
        ],
        "turns": turns,
        "conversation_end": end,
        "final_reply": replies[-1] if replies else "",
        "agent": {
            "name": "spoke-agent",
            "model": "scripted",
            "temperature": 0.0,
            "instructions_sha256": "0" * 64,
        },
        "usage": {"agent": {}, "user": {}},
    }
    data.update(extra)
    return data


@dataclass
class StubPortal:
    """Routes ``(method, path)`` to ``(status, body)``; records every request."""

    routes: dict[tuple[str, str], tuple[int, Any]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""
    token: str | None = None

    def route(self, method: str, path: str, status: int, body: Any) -> None:
        self.routes[(method, path)] = (status, body)

    def add_pull_request(self, pr_id: int, **fields: Any) -> dict[str, Any]:
        pr = {
            "id": pr_id,
            "url": f"{self.url}/repos/spokes/pullrequest/{pr_id}",
            "title": "Change",
            "description": "",
            "spoke_name": "billing",
            "file": "spokes/billing.json",
            "status": "active",
            "validation_status": "succeeded",
            "validation_errors": [],
            "diff": "",
            **fields,
        }
        self.route("GET", f"/api/pull-requests/{pr_id}", 200, pr)
        return pr


def _handler(stub: StubPortal) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def _answer(self, method: str) -> None:
            stub.requests.append({"method": method, "path": self.path, "headers": dict(self.headers)})
            if stub.token and self.headers.get("Authorization") != f"Bearer {stub.token}":
                status, body = 401, {"detail": "missing or bad bearer token"}
            else:
                status, body = stub.routes.get((method, self.path), (404, {"detail": "Not Found"}))
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

    return Handler


@contextmanager
def stub_portal(token: str | None = None) -> Iterator[StubPortal]:
    """A stub portal on 127.0.0.1 (an ephemeral port) for the duration of the block."""
    stub = StubPortal(token=token)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stub))
    stub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
