"""A stand-in for an OpenAI-compatible gateway (what a LiteLLM proxy does for the kit), for tests.

:class:`StandInGateway` listens on ``127.0.0.1`` and forwards ``POST /v1/chat/completions`` to an
upstream OpenAI-compatible server (the scripted one), after checking the caller's virtual key
(``Authorization: Bearer <key>``): an unknown key answers 401, a key whose budget is spent 400
``budget_exceeded`` (LiteLLM's answer: ``{"error": {"message": "Budget has been exceeded! Current
cost: …, Max budget: …", "type": "budget_exceeded", …}}``). After each answer it adds the call's
cost (from the usage the upstream reported, at the gateway's own prices) to the key's spend and
sends it back in ``x-litellm-response-cost``. ``gateway.keys[key]`` holds each key's role, budget,
spend and calls, so a test can compare the gateway's cost per key with the kit's cost per role::

    keys = {"sk-agent": GatewayKey("agent"), "sk-user": GatewayKey("user", max_budget_usd=0.01)}
    with StandInGateway(scripted.base_url, keys, prices) as gateway:
        env = {"OPENAI_BASE_URL": gateway.base_url, "LLM_API_KEY_AGENT": "sk-agent", "LLM_API_KEY_USER": "sk-user"}

Only what the kit needs is there: no streaming, no other route, no key management API.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from agent_evals.llm.pricing import PriceTable

ROUTE = "/v1/chat/completions"


@dataclass
class GatewayKey:
    role: str
    max_budget_usd: float | None = None
    spend_usd: float = 0.0
    calls: int = 0
    refused: int = 0


class StandInGateway:
    def __init__(self, upstream_base_url: str, keys: Mapping[str, GatewayKey], prices: PriceTable) -> None:
        self.upstream = upstream_base_url.rstrip("/")
        self.keys = dict(keys)
        self.prices = prices
        self.lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    def __enter__(self) -> StandInGateway:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.daemon_threads = True
        httpd.gateway = self  # type: ignore[attr-defined]  # our attribute on the stdlib server, for _Handler
        self._httpd = httpd
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "use StandInGateway as a context manager"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def admit(self, key: str | None) -> tuple[int, dict[str, Any]] | GatewayKey:
        """The key's account, or the error answer (status, body) for an unknown or spent key."""
        with self.lock:
            account = self.keys.get(key or "")
            if account is None:
                return 401, _error("Authentication Error, Invalid proxy server token passed", "auth_error", 401)
            if account.max_budget_usd is not None and account.spend_usd >= account.max_budget_usd:
                account.refused += 1
                return 400, _error(
                    f"Budget has been exceeded! Current cost: {account.spend_usd}, Max budget: {account.max_budget_usd}",
                    "budget_exceeded", 400,
                )
            return account

    def charge(self, account: GatewayKey, body: Mapping[str, Any]) -> float:
        usage = body.get("usage") or {}
        cost = self.prices.cost(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
                                str(body.get("model") or ""))
        with self.lock:
            account.spend_usd = round(account.spend_usd + cost, 8)
            account.calls += 1
        return cost


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        gateway: StandInGateway = self.server.gateway  # type: ignore[attr-defined]  # set in __enter__
        payload = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path.split("?")[0] != ROUTE:
            self._send(404, _error(f"no route {self.path}", "not_found", 404))
            return
        auth = self.headers.get("authorization") or ""
        admitted = gateway.admit(auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else None)
        if not isinstance(admitted, GatewayKey):
            self._send(*admitted)
            return
        status, body = _forward(gateway.upstream + "/chat/completions", payload)
        headers = {}
        if status == 200 and isinstance(body, dict):
            headers["x-litellm-response-cost"] = str(gateway.charge(admitted, body))
        self._send(status, body, headers)

    def _send(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


def _forward(url: str, payload: bytes) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=payload, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def _error(message: str, kind: str, status: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": str(status)}}
