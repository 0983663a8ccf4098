"""Real receivers of what the exporters send: OTLP/HTTP (``/v1/traces``, protobuf, decoded with the
OpenTelemetry protocol's own classes) and Azure Monitor's ingestion endpoint (``/v2.1/track``)."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


class Receiver:
    """Collects spans (OTLP) and envelopes (Azure Monitor); :meth:`wait_for` blocks until a condition holds."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.envelopes: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        self.otlp: list[bytes] = []  # the bodies of /v1/traces, as sent
        self._changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server interface
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip" or body[:2] == b"\x1f\x8b":
                    body = gzip.decompress(body)
                receiver._received(self.path, body)
                answer = b"{}" if "track" in self.path else b""
                if "track" in self.path:
                    items = len(json.loads(body)) if body.startswith(b"[") else 0
                    answer = json.dumps({"itemsReceived": items, "itemsAccepted": items, "errors": []}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json" if "track" in self.path else "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _received(self, path: str, body: bytes) -> None:
        with self._changed:
            self.raw.append(body)
            if path.endswith("/v1/traces"):
                self.otlp.append(body)
                request = ExportTraceServiceRequest.FromString(body)
                for resource in request.resource_spans:
                    service = {a.key: _value(a.value) for a in resource.resource.attributes}
                    for scope in resource.scope_spans:
                        for span in scope.spans:
                            self.spans.append({
                                "name": span.name, "trace_id": span.trace_id.hex(), "span_id": span.span_id.hex(),
                                "parent_id": span.parent_span_id.hex(), "kind": span.kind,
                                "attributes": {a.key: _value(a.value) for a in span.attributes},
                                "status": span.status.code, "resource": service, "scope": scope.scope.name,
                            })
            elif path.endswith("/track"):
                text = body.decode()
                items = json.loads(text) if text.startswith("[") else [json.loads(line) for line in text.splitlines() if line]
                self.envelopes.extend(items)
            self._changed.notify_all()

    def wait_for(self, condition: Callable[[Receiver], bool], timeout: float = 60.0) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: condition(self), timeout)
