"""DNS-rebinding and cross-site protection for every route, REST and HTML as MCP.

The MCP SDK checks ``/mcp`` requests itself (``app.transport_security``); the REST and HTML
routes need the same, or a web page in the developer's browser could drive a portal without a
token: a cross-site form POST to ``/api/pull-requests/7/abandon`` needs no JavaScript.

* **Host** (a loopback bind): the ``Host`` header must be a loopback name or the public URL's
  host, else ``421``: a DNS-rebinding page reaches 127.0.0.1 under its own name.
* **Origin** (any bind): a browser's ``Origin`` header, when sent, must be a loopback origin or
  the public URL's, else ``403``. Browsers send it on every cross-origin request and on every
  POST; the kit's own clients (and curl) send none.
* **Sec-Fetch-Site** (any bind): a POST, PUT, PATCH or DELETE a browser marks ``cross-site`` is
  refused (``403``) even without an ``Origin``.

The rules are those of the MCP SDK's ``TransportSecuritySettings`` (``host:*`` matches any port),
with the same lists (``app.transport_security``); a loopback name without a port is accepted too.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def allowed_origins(public_url: str) -> list[str]:
    """Loopback origins and the public URL's (a portal bound elsewhere is reached under that name)."""
    public = urlsplit(public_url)
    extra = [f"{public.scheme}://{public.netloc}"] if public.hostname else []
    return [*LOOPBACK_ORIGINS, *extra]


def matches(value: str, patterns: Sequence[str]) -> bool:
    """``value`` is one of ``patterns``, where ``name:*`` stands for ``name`` on any port (or without one)."""
    return value in patterns or any(p.endswith(":*") and (value.startswith(p[:-1]) or value == p[:-2])
                                    for p in patterns)


class SameOrigin:
    """The checks above; ``hosts`` None: any Host (a non-loopback bind, as the MCP SDK leaves it)."""

    def __init__(self, app: ASGIApp, hosts: Sequence[str] | None, origins: Sequence[str]) -> None:
        self.app = app
        self.hosts = hosts
        self.origins = origins

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        headers = Headers(scope=scope)
        host = headers.get("host") or ""
        if self.hosts is not None and not matches(host, self.hosts):
            return 421, f"Host {host or '(none)'!r} is not this portal's (a loopback name or its public URL's)"
        origin = headers.get("origin")
        if origin is not None and not matches(origin, self.origins):
            return 403, f"a request from {origin} is refused: only pages of this portal may call it (cross-site)"
        if scope.get("method") in UNSAFE and headers.get("sec-fetch-site") == "cross-site":
            return 403, "a cross-site request that changes something is refused"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (refused := self.refusal(scope)) is not None:
            status, message = refused
            await JSONResponse({"error": message}, status_code=status)(scope, receive, send)
            return
        await self.app(scope, receive, send)
