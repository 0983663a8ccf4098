"""The ASGI application: REST + HTML (FastAPI) and MCP (mounted at /mcp), behind bearer auth and
the same Host/Origin protection for every route (``same_origin``).

``create_app(config, extra_routers=...)`` is the only way to build it; other parts add
their routes (e.g. ``POST /api/agents/{name}/chat``) as extra routers, which get the
same authentication. Routes reach the portal through ``request.app.state.portal``
(a ``Portal``) and the configuration through ``request.app.state.config``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_evals.packs.spoke.portal.auth import BearerAuth
from agent_evals.packs.spoke.portal.errors import CallerError
from agent_evals.packs.spoke.portal.rest import build_router
from agent_evals.packs.spoke.portal.same_origin import LOOPBACK_HOSTS, LOOPBACK_ORIGINS, SameOrigin, allowed_origins
from agent_evals.packs.spoke.portal.service import Portal
from agent_evals.packs.spoke.portal.settings import PortalSettings
from agent_evals.packs.spoke.portal.tools import build_mcp

MCP_PATH = "/mcp"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class PortalConfig:
    """How to run a portal. ``token`` None = no authentication; ``host`` is the bind address."""

    data_dir: Path
    public_url: str
    settings: PortalSettings = field(default_factory=PortalSettings)
    token: str | None = field(default=None, repr=False)
    host: str = "127.0.0.1"


class _McpSlash:
    """Serve ``/mcp`` like ``/mcp/`` instead of answering a redirect clients may not follow."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") == MCP_PATH:
            scope = {**scope, "path": MCP_PATH + "/", "raw_path": (MCP_PATH + "/").encode()}
        await self.app(scope, receive, send)


def transport_security(config: PortalConfig) -> TransportSecuritySettings | None:
    """The MCP SDK's DNS-rebinding protection: on for a loopback bind, also allowing the public URL's host.

    ``None`` (a non-loopback bind) leaves the SDK's default, which does not check Host headers.
    """
    if config.host not in LOOPBACK:
        return None
    hosts = list(LOOPBACK_HOSTS)
    origins = list(LOOPBACK_ORIGINS)
    public = urlsplit(config.public_url)
    if public.hostname and public.hostname not in LOOPBACK:
        hosts += [public.netloc, f"{public.hostname}:*"]
        origins += [f"{public.scheme}://{public.netloc}"]
    return TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)


def create_app(config: PortalConfig, *, extra_routers: Sequence[APIRouter] = ()) -> FastAPI:
    """Build the portal app over ``config.data_dir`` (created from the seed if missing)."""
    portal = Portal(config.data_dir, config.settings, config.public_url)
    mcp = build_mcp(portal)
    mcp_app = mcp.streamable_http_app(
        streamable_http_path="/",
        stateless_http=True,
        json_response=True,
        transport_security=transport_security(config),
        host=config.host,
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield
        portal.close()

    app = FastAPI(title="Spoke portal", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.portal = portal
    app.state.config = config
    app.state.mcp = mcp
    app.add_exception_handler(CallerError, _portal_error)  # type: ignore[arg-type]  # Starlette types it for any Exception
    app.include_router(build_router(portal))
    for router in extra_routers:
        app.include_router(router)
    app.mount(MCP_PATH, mcp_app)
    app.add_middleware(BearerAuth, token=config.token)
    security = transport_security(config)  # the same Host and Origin rules for REST and HTML as for MCP
    app.add_middleware(SameOrigin, hosts=security.allowed_hosts if security is not None else None,
                       origins=security.allowed_origins if security is not None else allowed_origins(config.public_url))
    app.add_middleware(_McpSlash)
    return app


async def _portal_error(_: Request, exc: CallerError) -> JSONResponse:
    return JSONResponse({"error": str(exc)}, status_code=exc.status)
