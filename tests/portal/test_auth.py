"""Bearer-token authentication on MCP, REST and HTML; the token never reaches logs or disk."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from agent_evals.packs.spoke.portal.process import PortalProcess

from .helpers import INIT, MCP_HEADERS, Mcp

UNAUTHORIZED = {"error": "unauthorized: send 'Authorization: Bearer <token>' with the portal's token"}
PROTECTED = [
    ("GET", "/api/spokes"),
    ("GET", "/api/spokes/crm-dev-neu"),
    ("GET", "/api/schema"),
    ("GET", "/api/pull-requests"),
    ("GET", "/api/pull-requests/1"),
    ("POST", "/api/pull-requests/1/abandon"),
    ("GET", "/repos/spokes/pullrequest/1"),
    ("POST", "/mcp/"),
    ("POST", "/mcp"),
    ("GET", "/api/does-not-exist"),
]


def request(portal: PortalProcess, method: str, path: str, authorization: str | None) -> httpx.Response:
    headers = dict(MCP_HEADERS)
    if authorization is not None:
        headers["Authorization"] = authorization
    return httpx.request(
        method, portal.url + path, headers=headers, json=INIT if path.startswith("/mcp") else None, timeout=10
    )


@pytest.mark.parametrize(("method", "path"), PROTECTED)
@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer wrong-token", "Basic dXNlcjpwYXNz", "Bearer", "Token abc"],
    ids=["none", "wrong", "basic", "empty", "other-scheme"],
)
def test_calls_without_the_right_token_get_401(
    portal: PortalProcess, method: str, path: str, authorization: str | None
) -> None:
    response = request(portal, method, path, authorization)
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/api/spokes", 200),
        ("GET", "/api/pull-requests/1", 404),
        ("POST", "/mcp/", 200),
        ("POST", "/mcp", 200),
        ("GET", "/repos/spokes/pullrequest/1", 404),
    ],
)
def test_the_right_token_works(portal: PortalProcess, method: str, path: str, status: int) -> None:
    assert request(portal, method, path, f"Bearer {portal.token}").status_code == status
    assert (
        request(portal, method, path, f"bearer {portal.token}").status_code == status
    )  # scheme is case-blind


def test_health_stays_open(portal: PortalProcess) -> None:
    assert request(portal, "GET", "/api/health", None).json() == {"status": "ok", "spokes": 14}


def test_mcp_client_with_a_wrong_token_fails_and_with_the_right_one_works(portal: PortalProcess) -> None:
    # The SDK turns the 401 into an MCPError inside an ExceptionGroup; the raw 401 is checked above.
    with pytest.raises(BaseExceptionGroup) as info:
        Mcp(portal.url, "wrong").tools()
    assert "Server returned an error response" in repr(info.value)
    assert len(Mcp(portal.url, portal.token).tools()) == 10


def test_token_is_not_logged_written_or_on_the_command_line(portal: PortalProcess) -> None:
    assert portal.token and portal.pid
    for _ in range(3):
        request(portal, "GET", "/api/spokes", f"Bearer {portal.token}")
        request(portal, "GET", "/api/spokes?x=1", f"Bearer {portal.token}x")
    log_text = portal.log_file.read_text()
    assert "GET /api/spokes" in log_text  # the access log is there ...
    assert portal.token not in log_text  # ... without the token
    assert portal.token.encode() not in Path(f"/proc/{portal.pid}/cmdline").read_bytes()
    for path in portal.data_dir.rglob("*"):
        if path.is_file():
            assert portal.token.encode() not in path.read_bytes(), path
