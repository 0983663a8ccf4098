"""The portal REST client against a stub portal on 127.0.0.1 (and pure URL helpers)."""

from __future__ import annotations

import socket

import pytest

from agent_evals.packs.spoke.portal import api as portal_api
from agent_evals.packs.spoke.portal.api import (
    PortalAPI,
    PortalError,
    PortalNotConfigured,
    PortalNotFound,
    PortalUnavailable,
    find_pull_request_links,
    find_pull_request_urls,
    pull_request_url,
)

from ._assertion_support import StubPortal, stub_portal

SECRET = "s3cret-token-value"


def test_public_names() -> None:
    assert set(portal_api.__all__) <= set(dir(portal_api))


def test_endpoints_and_auth_header() -> None:
    with stub_portal(token=SECRET) as stub:
        stub.route("GET", "/api/health", 200, {"status": "ok", "spokes": 3})
        stub.route("GET", "/api/spokes/a%2Fb", 200, {"name": "a/b", "file": "f", "config": {}})
        stub.route(
            "GET", "/api/schema", 200, {"schema": {}, "additional_schema": None, "file_name_rules": None}
        )
        stub.route(
            "GET",
            "/api/pull-requests?status=active&eval_id=e1",
            200,
            {"pull_requests": [{"id": 2}, {"id": 1}]},
        )
        stub.route("GET", "/api/pull-requests", 200, {"pull_requests": []})
        stub.add_pull_request(2)
        stub.route("POST", "/api/pull-requests/2/abandon", 200, {"id": 2, "status": "abandoned"})
        api = PortalAPI(stub.url + "/", token=SECRET, timeout=5)
        assert api.health() == {"status": "ok", "spokes": 3}
        assert api.get_spoke("a/b")["name"] == "a/b"  # the name is one path segment
        assert api.get_schema()["additional_schema"] is None
        assert [pr["id"] for pr in api.list_pull_requests(status="active", eval_id="e1")] == [2, 1]
        assert api.list_pull_requests() == []
        assert api.get_pull_request(2)["status"] == "active"
        assert api.abandon_pull_request(2)["status"] == "abandoned"
        assert all(request["headers"]["Authorization"] == f"Bearer {SECRET}" for request in stub.requests)
        assert stub.requests[-1]["method"] == "POST"


def test_no_token_no_header(portal_stub: StubPortal, portal_client: PortalAPI) -> None:
    portal_stub.route("GET", "/api/health", 200, {"status": "ok", "spokes": 0})
    portal_client.health()
    assert "Authorization" not in portal_stub.requests[0]["headers"]


def test_statuses_map_to_typed_errors() -> None:
    with stub_portal(token=SECRET) as stub:
        stub.route("GET", "/api/spokes/bad%20name", 400, {"detail": "bad spoke name"})
        stub.route("POST", "/api/pull-requests/5/abandon", 409, {"detail": "PR 5 is completed"})
        stub.route("GET", "/api/pull-requests/6", 500, b"<html>boom</html>")
        stub.route("GET", "/api/schema", 200, b"not json")
        api = PortalAPI(stub.url, token=SECRET, timeout=5)
        with pytest.raises(PortalNotFound) as missing:
            api.get_pull_request(99)
        assert missing.value.status == 404
        assert str(missing.value) == f"GET {stub.url}/api/pull-requests/99: HTTP 404: Not Found"
        with pytest.raises(PortalError) as bad:
            api.get_spoke("bad name")
        assert (bad.value.status, bad.value.detail) == (400, "bad spoke name")
        with pytest.raises(PortalError) as conflict:
            api.abandon_pull_request(5)
        assert conflict.value.status == 409 and "PR 5 is completed" in str(conflict.value)
        with pytest.raises(PortalError, match="HTTP 500: <html>boom</html>"):
            api.get_pull_request(6)
        with pytest.raises(PortalError, match="invalid JSON"):
            api.get_schema()
        wrong = PortalAPI(stub.url, token="wrong-token-123", timeout=5)
        with pytest.raises(PortalError) as unauthorized:
            wrong.health()
        assert unauthorized.value.status == 401 and "check PORTAL_TOKEN" in str(unauthorized.value)
        assert "wrong-token-123" not in str(unauthorized.value)


def test_token_never_in_errors_even_when_echoed() -> None:
    with stub_portal(token=SECRET) as stub:
        stub.route("GET", "/api/health", 500, {"detail": f"bad header Bearer {SECRET}"})
        api = PortalAPI(stub.url, token=SECRET, timeout=5)
        with pytest.raises(PortalError) as err:
            api.health()
    assert SECRET not in str(err.value) and SECRET not in repr(err.value.detail)
    assert "***" in str(err.value)
    assert SECRET not in repr(api)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_connection_refused_is_unavailable() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    with pytest.raises(PortalUnavailable) as err:
        PortalAPI(url, token=SECRET, timeout=2).health()
    assert str(err.value).startswith(f"the portal at {url} is not reachable (GET {url}/api/health)")
    assert err.value.status is None
    assert SECRET not in str(err.value)


def test_timeout_is_unavailable() -> None:
    with socket.socket() as sock:  # accepts connections (backlog) but never answers
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        with pytest.raises(PortalUnavailable, match="is not reachable"):
            PortalAPI(url, timeout=0.3).health()


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PORTAL_URL", raising=False)
    with pytest.raises(PortalNotConfigured, match="PORTAL_URL is not set"):
        PortalAPI.from_env()
    monkeypatch.setenv("PORTAL_URL", "http://127.0.0.1:8400/")
    monkeypatch.setenv("PORTAL_TOKEN", SECRET)
    api = PortalAPI.from_env(timeout=3)
    assert (api.base_url, api.timeout) == ("http://127.0.0.1:8400", 3)
    assert repr(api) == "PortalAPI('http://127.0.0.1:8400', token=set)"
    with pytest.raises(PortalError, match="must start with http"):
        PortalAPI("127.0.0.1:8400")


def test_pull_request_url_helpers() -> None:
    base = "http://127.0.0.1:8400"
    assert pull_request_url(base + "/", 7) == "http://127.0.0.1:8400/repos/spokes/pullrequest/7"
    text = (
        "Created [PR 7](http://127.0.0.1:8400/repos/spokes/pullrequest/7). Also http://127.0.0.1:8400/repos/spokes/"
        "pullrequest/12, again <http://127.0.0.1:8400/repos/spokes/pullrequest/7>, elsewhere "
        "https://dev.azure.com/org/p/_git/spokes/pullrequest/9 and http://localhost:8400/repos/spokes/pullrequest/3 "
        "and http://127.0.0.1:8401/repos/spokes/pullrequest/4 and http://127.0.0.1:8400/repos/spokes/pullrequest/55x"
    )
    assert find_pull_request_urls(text, base) == [7, 12]
    assert find_pull_request_urls(text, base + "/") == [7, 12]
    assert [pr for _, pr in find_pull_request_links(text)] == [7, 12, 7, 9, 3, 4]
    assert find_pull_request_urls("no links", base) == []
    assert find_pull_request_urls(
        "http://portal.test/sub/repos/spokes/pullrequest/2", "http://portal.test/sub"
    ) == [2]
    assert find_pull_request_urls("HTTP://127.0.0.1:8400/repos/spokes/pullrequest/8", base) == [8]


def test_a_non_http_answer_is_a_portal_error() -> None:
    import threading

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)

        def answer() -> None:
            conn, _ = sock.accept()
            with conn:
                conn.recv(1024)
                conn.sendall(b"garbage\r\n\r\n")

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        with pytest.raises(PortalError, match="not valid HTTP"):
            PortalAPI(url, timeout=5).health()
        thread.join(5)


def test_assertions_package_exports() -> None:
    import agent_evals.assertions as package

    assert set(package.__all__) <= set(dir(package))
