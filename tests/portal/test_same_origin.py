"""A web page in the developer's browser cannot drive a portal without a token: REST and HTML routes
get MCP's Host and Origin checks, and a cross-site form POST is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.processes import KitStarter
from agent_evals.packs.spoke.portal.api import PortalAPI

from .helpers import INIT, MCP_HEADERS, new_spoke


@pytest.fixture(scope="module")
def open_portal(
    tmp_path_factory: pytest.TempPathFactory, portal_starter: KitStarter
) -> Iterator[PortalProcess]:
    """``npm run portal`` as a developer runs it: no token."""
    root = tmp_path_factory.mktemp("open-portal")
    with PortalProcess(
            starter=portal_starter, data_dir=root / "data", log_file=root / "portal.log") as process:
        yield process


def _new_pr(portal: PortalProcess, name: str) -> int:
    api = PortalAPI(portal.url)
    config = new_spoke(name)
    return api._request("POST", "/api/fixtures/pull-requests",
                        {"spoke_name": name, "config": config, "title": "t"})["id"]


def test_a_cross_site_form_post_cannot_abandon_a_pull_request(open_portal: PortalProcess) -> None:
    pr = _new_pr(open_portal, "billing-dev-weu")
    form = {"Origin": "https://evil.example", "Content-Type": "application/x-www-form-urlencoded",
            "Sec-Fetch-Site": "cross-site"}
    refused = httpx.post(f"{open_portal.url}/api/pull-requests/{pr}/abandon", content=b"", headers=form)
    assert refused.status_code == 403
    assert refused.json() == {"error": "a request from https://evil.example is refused: only pages of this portal may "
                                       "call it (cross-site)"}
    no_origin = httpx.post(f"{open_portal.url}/api/pull-requests/{pr}/abandon", headers={"Sec-Fetch-Site": "cross-site"})
    assert no_origin.status_code == 403
    assert no_origin.json() == {"error": "a cross-site request that changes something is refused"}
    assert PortalAPI(open_portal.url).get_pull_request(pr)["status"] == "active"
    # the kit's client (and curl) send no Origin; a page of the portal itself sends its own
    assert PortalAPI(open_portal.url).abandon_pull_request(pr)["status"] == "abandoned"
    own = httpx.post(f"{open_portal.url}/api/pull-requests/{pr}/abandon", headers={"Origin": open_portal.url})
    assert own.status_code == 200


@pytest.mark.parametrize("path", ["/api/spokes", "/api/pull-requests", "/repos/spokes/pullrequest/1", "/mcp/"])
def test_a_dns_rebinding_page_gets_421_everywhere(open_portal: PortalProcess, path: str) -> None:
    """A page of evil.example whose name now points at 127.0.0.1 sends its own Host."""
    if path == "/mcp/":
        response = httpx.post(open_portal.url + path, json=INIT, headers={**MCP_HEADERS, "Host": "evil.example"})
    else:
        response = httpx.get(open_portal.url + path, headers={"Host": "evil.example"})
    assert response.status_code == 421
    assert httpx.get(open_portal.url + "/api/spokes", headers={"Host": "localhost:1234"}).status_code == 200


def test_a_foreign_origin_cannot_read_either(open_portal: PortalProcess) -> None:
    response = httpx.get(f"{open_portal.url}/api/pull-requests", headers={"Origin": "http://127.0.0.1.evil.example"})
    assert response.status_code == 403


def test_a_portal_bound_beyond_loopback_still_refuses_foreign_origins(tmp_path: Path) -> None:
    """In process (a test binds no address beyond loopback): any Host, as MCP's, but no foreign Origin."""
    from starlette.testclient import TestClient

    from agent_evals.packs.spoke.portal.app import PortalConfig, create_app

    config = PortalConfig(data_dir=tmp_path / "data", public_url="http://portal.example.com:8400", host="0.0.0.0")
    with TestClient(create_app(config), base_url="http://portal.example.com:8400") as client:
        assert client.get("/api/spokes", headers={"Host": "any.name"}).status_code == 200
        assert client.post("/api/pull-requests/1/abandon", headers={"Origin": "https://evil.example"}).status_code == 403
        assert client.get("/api/spokes", headers={"Origin": "http://portal.example.com:8400"}).status_code == 200
