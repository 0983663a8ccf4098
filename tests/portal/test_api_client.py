"""The portal's REST client (``packs/spoke/portal/api.py``) stays small when imported, and builds its
HTTP opener once (a portal on this machine without the environment's proxy).

The ``small-portal-client`` contract of pyproject.toml holds its own imports to the standard library and
``agent_evals.authoring``; the surface reaches the SDKs only through names it imports on first use, so
what a process importing the client loads is checked here, for real."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import pytest

from agent_evals.packs.spoke.portal.api import PortalAPI, PortalUnavailable
from agent_evals.packs.spoke.portal.process import PortalProcess

SDKS = ["httpx", "fastapi", "uvicorn", "pydantic", "openai", "mcp", "yaml"]


def test_importing_the_client_loads_no_web_framework_model_or_mcp_sdk() -> None:
    code = ("import json, sys\nimport agent_evals.packs.spoke.portal.api as api\n"
            f"print(json.dumps([m for m in {SDKS!r} if m in sys.modules]))\n"
            "print(issubclass(api.PortalError, __import__('agent_evals.authoring').authoring.SystemFailure))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [json.dumps([]), "True"]


def test_a_client_builds_its_opener_once_and_a_portal_on_this_machine_goes_round_no_proxy(
    live_portal: PortalProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = []
    real = urllib.request.build_opener

    def counted(*handlers: urllib.request.BaseHandler) -> urllib.request.OpenerDirector:
        built.append(handlers)
        return real(*handlers)

    monkeypatch.setattr(urllib.request, "build_opener", counted)
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # nothing listens there: a proxy would refuse
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    client = PortalAPI(live_portal.url, token=live_portal.token)
    for _ in range(3):
        assert client.health()["status"] == "ok"
    assert len(built) == 1  # one opener for every request of the client
    remote = PortalAPI("http://portal.example", token="t")  # not this machine: the environment's proxy
    with pytest.raises(PortalUnavailable):
        remote.health()
    assert len(built) == 2 and built[1] == ()
