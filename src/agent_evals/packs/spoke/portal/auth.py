"""Bearer-token authentication for every route (REST, HTML, MCP), as a plain ASGI middleware.

With a token configured, a request needs ``Authorization: Bearer <token>`` (compared in
constant time), else it gets ``401 {"error": ...}``. ``/api/health`` stays open so
process supervisors can probe readiness; it reveals only the spoke count. The token
is never logged and never echoed back.
"""

from __future__ import annotations

import hmac

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

OPEN_PATHS: frozenset[str] = frozenset({"/api/health"})


def bearer_token(scope: Scope) -> str | None:
    """The token of the request's ``Authorization: Bearer`` header, if any."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


class BearerAuth:
    def __init__(self, app: ASGIApp, token: str | None, open_paths: frozenset[str] = OPEN_PATHS) -> None:
        self.app = app
        self._token = token.encode("utf-8") if token else None
        self._open = open_paths

    def allowed(self, scope: Scope) -> bool:
        if self._token is None or scope.get("path") in self._open:
            return True
        given = bearer_token(scope)
        return given is not None and hmac.compare_digest(given.encode("utf-8"), self._token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and not self.allowed(scope):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            response = JSONResponse(
                {"error": "unauthorized: send 'Authorization: Bearer <token>' with the portal's token"},
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
