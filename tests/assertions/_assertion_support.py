"""Test support for the assertion tests: run-record (v2) metadata builders, end-state snapshots,
and a stub portal (stdlib HTTP server) for the REST client tests and the Promptfoo end-to-end test."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent_evals.record import MARKER, RECORD_VERSION, ended_by

BASE = "http://127.0.0.1:8400"
_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "calls": 0, "cost": 0.0}


def call(
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    turn: int = 1,
    is_error: bool = False,
    outcome: str | None = None,
    result: Any = None,
    raw: str | None = None,
) -> dict[str, Any]:
    """A tool call as ``ToolCall.to_dict()`` writes it; ``index`` is set by :func:`metadata`.

    ``outcome`` defaults to ``tool_error`` when ``is_error`` is true, else ``ok``;
    ``arguments=None`` with ``raw`` models unparsable arguments.
    """
    args = {} if arguments is None and raw is None else arguments
    outcome = outcome or ("tool_error" if is_error else "ok")
    failed = outcome != "ok"
    return {
        "id": "",  # set by metadata() from the position
        "name": name,
        "arguments": args,
        "raw_arguments": raw if raw is not None else json.dumps(args),
        "outcome": outcome,
        "is_error": failed,
        "result": result if result is not None else ({"error": "failed"} if failed else {"ok": True}),
        "turn": turn,
        "index": 0,
        "duration_ms": 1.0,
    }


def metadata(
    calls: list[dict[str, Any]] | None = None,
    *,
    replies: list[str] | None = None,
    pull_requests: list[int] | None = None,
    turns: int | None = None,
    end: str = "done",
    error_kind: str | None = None,
    error: str | None = None,
    base_url: str = BASE,
    snapshot: Mapping[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A run record's metadata (``RunRecord.to_metadata()`` form, this kit's version).

    The conversation has ``turns`` user turns (default: as many as the replies and the
    calls' turns need), each answered; ``replies`` are the agent's last replies (earlier
    turns get a neutral filler), so ``replies[-1]`` is the final reply. Calls are numbered
    by position. ``end == "error"`` sets ``error_kind`` (default ``internal``) and ``error``.
    ``snapshot`` (see :func:`snapshot`) is left out when None, as for a run without one.
    """
    replies = list(replies) if replies is not None else ["Done."]
    placed = [
        {**item, "id": item.get("id") or f"call_{index}", "index": index}
        for index, item in enumerate(calls or [], start=1)
    ]
    count = max([turns or 0, len(replies), 1, *(item["turn"] for item in placed)])
    texts = [f"(reply in turn {number})" for number in range(1, count - len(replies) + 1)] + replies
    transcript: list[dict[str, Any]] = []
    for number, text in enumerate(texts, start=1):
        names = [item["name"] for item in placed if item["turn"] == number]
        transcript.append({"role": "user", "content": f"request {number}", "turn": number, "tool_calls": []})
        transcript.append({"role": "assistant", "content": text, "turn": number, "tool_calls": names})
    if end == "error":
        error_kind, error = error_kind or "internal", error or "unknown error"
    data: dict[str, Any] = {
        MARKER: RECORD_VERSION,
        "case_id": "T01",
        "agent": {"name": "spoke-agent", "model": "scripted", "temperature": 0.0, "instructions_sha256": "0" * 64},
        "user": {"kind": "user_messages", "model": None},
        "turns": count,
        "transcript": transcript,
        "tool_calls": placed,
        "side_effects": [{"kind": "pull_request", "id": str(pr), "url": pull_request_url(base_url, pr)}
                         for pr in (pull_requests or [])],
        "conversation_end": end,
        "ended_by": ended_by(end),  # type: ignore[arg-type]
        "error_kind": error_kind,
        "error": error,
        "final_reply": texts[-1],
        "usage": {role: dict(_USAGE) for role in ("agent", "user", "judge")},
    }
    if snapshot is not None:
        data["snapshot"] = dict(snapshot)
    data.update(extra)
    return data


def pull_request_url(base_url: str, pr_id: int) -> str:
    return f"{base_url.rstrip('/')}/repos/spokes/pullrequest/{pr_id}"


def portal_pull_request(pr_id: int, base_url: str = BASE, **fields: Any) -> dict[str, Any]:
    """A PR as the portal's REST API returns it (``GET /api/pull-requests/{id}``): active, validated."""
    return {
        "id": pr_id,
        "url": pull_request_url(base_url, pr_id),
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


def snapshot(
    read_from: str = BASE,
    *,
    pull_requests: list[dict[str, Any]] | tuple[dict[str, Any], ...] = (),
    schema: dict[str, Any] | None = None,
    additional_schema: dict[str, Any] | None = None,
    spokes: Mapping[str, dict[str, Any] | None] | None = None,
    resources: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The metadata ``snapshot`` the spoke pack takes, read from the portal at ``read_from``: the
    ``pull_requests`` resource (see :func:`portal_pull_request`), the schema resource when ``schema``
    is given, and a ``spoke/<name>`` resource per source spoke (None: the spoke does not exist);
    ``resources`` adds or overrides raw resources."""
    found: dict[str, Any] = {"pull_requests": [dict(pr) for pr in pull_requests]}
    if schema is not None:
        found["schema"] = {"schema": schema, "additional_schema": additional_schema, "file_name_rules": None}
    for name, config in (spokes or {}).items():
        found[f"spoke/{name}"] = (
            None if config is None else {"name": name, "file": f"spokes/{name}.json", "config": config}
        )
    found.update(resources or {})
    return {"read_from": read_from, "resources": found}


def version_2(data: Mapping[str, Any]) -> dict[str, Any]:
    """The same row as the kit wrote it before version 3 (an old Promptfoo row, regraded): the portal's
    pull requests as ``pull_requests: [{id, url}]`` and the snapshot as ``{portal_url, pull_requests,
    resources}``."""
    old = {**data, MARKER: 2, "pull_requests": [
        {"id": int(e["id"]), "url": e.get("url", "")} for e in data["side_effects"] if e["kind"] == "pull_request"]}
    del old["side_effects"]
    if isinstance(data.get("snapshot"), Mapping):
        resources = dict(data["snapshot"]["resources"])
        old["snapshot"] = {"portal_url": data["snapshot"]["read_from"],
                           "pull_requests": resources.pop("pull_requests"), "resources": resources}
    return old


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
        pr = portal_pull_request(pr_id, self.url, **fields)
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
