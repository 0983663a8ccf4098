"""The portal process: start/stop, startup errors, settings, public URL, reset command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from agent_evals.packs.spoke.portal.datadir import ensure_data_dir
from agent_evals.processes import KitStarter
from agent_evals.packs.spoke.portal.process import PortalProcess, PortalStartError

from .helpers import INIT, MCP_HEADERS, Mcp, git, new_spoke

SETTINGS = """\
fileNameRules:
  pattern: "^[a-z0-9-]+-(dev|test|prod)-(weu|neu|sdc|gwc)$"
  description: "<application>-<environment>-<region code>"
additionalSchema:
  type: object
  properties:
    tags: {required: [dataClassification]}
"""


def test_settings_and_public_url_reach_the_tools(tmp_path: Path, portal_starter: KitStarter) -> None:
    (tmp_path / "settings.yaml").write_text(SETTINGS)
    with PortalProcess(
        data_dir=tmp_path / "data",
        starter=portal_starter,
        settings_file=tmp_path / "settings.yaml",
        public_url="https://portal.example.com/",
        log_file=tmp_path / "portal.log",
    ) as portal:
        mcp = Mcp(portal.url, None)
        info = mcp.ok("get_spoke_schema")
        assert info["file_name_rules"] == {
            "pattern": "^[a-z0-9-]+-(dev|test|prod)-(weu|neu|sdc|gwc)$",
            "description": "<application>-<environment>-<region code>",
            "examples": [],
        }
        assert info["additional_schema"]["properties"]["tags"] == {"required": ["dataClassification"]}
        config = new_spoke("billing-weu")
        del config["tags"]["dataClassification"]
        pr = mcp.ok(
            "create_spoke_pull_request",
            {"spoke_name": "billing-weu", "config": config, "title": "Add billing", "description": "x"},
        )
        assert pr["url"] == f"https://portal.example.com/repos/spokes/pullrequest/{pr['id']}"
        assert pr["validation_status"] == "failed"
        assert {(e["path"], e["rule"]) for e in pr["validation_errors"]} == {
            ("/name", "file-name-rule"),
            ("/tags/dataClassification", "additional-schema"),
        }
        # No token configured: open access.
        assert httpx.get(f"{portal.url}/api/spokes").status_code == 200
        # DNS-rebinding protection lets the public host through, and only it.
        for host, status in (("portal.example.com", 200), ("evil.example.net", 421)):
            response = httpx.post(f"{portal.url}/mcp/", json=INIT, headers={**MCP_HEADERS, "Host": host})
            assert response.status_code == status, host
        assert portal.stop() == 0
    assert "Application shutdown complete" in portal.log_file.read_text()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ("fileNameRule: {pattern: x, description: y}", "unknown key(s) 'fileNameRule'"),
        ("fileNameRules: {pattern: '([', description: y}", "is not a valid regular expression"),
        ("additionalSchema: {type: 12}", "is not a valid JSON schema"),
    ],
    ids=["unknown key", "bad regex", "bad schema"],
)
def test_bad_settings_stop_startup_with_the_reason(
    tmp_path: Path, settings: str, message: str, portal_starter: KitStarter
) -> None:
    (tmp_path / "settings.yaml").write_text(settings)
    settings_file = tmp_path / "settings.yaml"
    portal = PortalProcess(data_dir=tmp_path / "data", settings_file=settings_file, starter=portal_starter)
    with pytest.raises(PortalStartError, match="exited with code 2") as info:
        portal.start()
    assert "cannot start the portal" in str(info.value) and message in str(info.value)


def test_a_foreign_data_dir_stops_startup(tmp_path: Path, portal_starter: KitStarter) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "thesis.tex").write_text("keep me")
    with pytest.raises(PortalStartError, match="not a portal data dir"):
        PortalProcess(starter=portal_starter, data_dir=tmp_path / "data").start()
    assert (tmp_path / "data" / "thesis.tex").exists()


def test_corrupt_dir_recovers_and_a_second_portal_is_refused(
    tmp_path: Path, portal_starter: KitStarter
) -> None:
    data = ensure_data_dir(tmp_path / "data")
    (data / "pull_requests.sqlite3").write_bytes(b"not a database" * 50)
    with PortalProcess(starter=portal_starter, data_dir=data, log_file=tmp_path / "portal.log") as portal:
        assert httpx.get(f"{portal.url}/api/health").json() == {"status": "ok", "spokes": 14}
        assert "is corrupt" in portal.log_file.read_text()
        with pytest.raises(PortalStartError, match="in use by another running portal"):
            PortalProcess(starter=portal_starter, data_dir=data).start()
        reset = subprocess.run(
            [sys.executable, "-m", "agent_evals.cli", "portal", "reset", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert reset.returncode == 2 and "in use by another running portal" in reset.stderr


def test_reset_command_reseeds(tmp_path: Path, portal_starter: KitStarter) -> None:
    with PortalProcess(starter=portal_starter, data_dir=tmp_path / "data") as portal:
        Mcp(portal.url, None).ok(
            "create_spoke_pull_request",
            {"spoke_name": "billing-dev-weu", "config": new_spoke(), "title": "t", "description": "d"},
        )
    assert git(tmp_path / "data", "branch", "--list", "pr/*") != ""
    command = [sys.executable, "-m", "agent_evals.cli", "portal", "reset", "--data-dir", str(tmp_path / "data")]
    refused = subprocess.run(command, capture_output=True, text=True, check=False)
    assert refused.returncode == 2 and "1 active pull request(s)" in refused.stdout  # an active PR: --force needed
    assert git(tmp_path / "data", "branch", "--list", "pr/*") != ""
    reset = subprocess.run([*command, "--force"], capture_output=True, text=True, check=False)
    assert reset.returncode == 0, reset.stderr
    assert git(tmp_path / "data", "branch", "--list", "pr/*") == ""


def test_port_in_use_is_a_clear_error(tmp_path: Path, portal_starter: KitStarter) -> None:
    with PortalProcess(starter=portal_starter, data_dir=tmp_path / "a") as first:
        port = int(first.url.rsplit(":", 1)[1])
        with pytest.raises(PortalStartError, match=f"cannot listen on http://127.0.0.1:{port}"):
            PortalProcess(starter=portal_starter, data_dir=tmp_path / "b", port=port).start()


def test_a_port_bound_but_not_yet_served_by_another_portal_is_taken() -> None:
    """Two portals racing for one stable port: the one that bound first holds it from its bind on.
    (Before, both could bind with SO_REUSEADDR; the loser said it listened, its health check was
    answered by the winner, and it died when uvicorn began to serve: a flaky 401 in CI.)"""
    import socket

    from agent_evals.packs.spoke.portal.server import ListenError, _bind

    first = _bind("127.0.0.1", 0)
    try:
        with pytest.raises(ListenError, match="cannot listen on http://127.0.0.1:"):
            _bind("127.0.0.1", first.getsockname()[1])
        with socket.create_connection(first.getsockname(), timeout=5):
            pass  # it accepts connections before any server runs on it
    finally:
        first.close()


def test_a_killed_portal_restarts_with_its_data(tmp_path: Path, portal_starter: KitStarter) -> None:
    log_file = tmp_path / "portal.log"  # shared: the restart must not pick up the dead portal's URL
    with PortalProcess(starter=portal_starter, data_dir=tmp_path / "data", log_file=log_file) as portal:
        Mcp(portal.url, None).ok(
            "create_spoke_pull_request",
            {"spoke_name": "billing-dev-weu", "config": new_spoke(), "title": "t", "description": "d"},
        )
        assert portal.pid is not None
        os.kill(portal.pid, signal.SIGKILL)
        assert portal.stop() == -signal.SIGKILL
    with PortalProcess(starter=portal_starter, data_dir=tmp_path / "data", log_file=log_file) as again:
        pull_requests = httpx.get(f"{again.url}/api/pull-requests").json()["pull_requests"]
        assert [(pr["id"], pr["status"]) for pr in pull_requests] == [(1, "active")]
        assert "is corrupt" not in again.log_file.read_text()
        assert again.log_file.read_text().count("agent-evals portal listening on") == 2


def test_the_default_log_lives_beside_the_data_dir_and_a_clean_stop_takes_it_back(
    tmp_path: Path, portal_starter: KitStarter
) -> None:
    with PortalProcess(starter=portal_starter, data_dir=tmp_path / "data") as portal:
        log = portal.log_file
        assert log == tmp_path / ".data.portal.log" and "listening on" in log.read_text()
    assert not log.exists()  # a clean stop: nothing left, and nothing ever in the temporary directory


def test_a_portal_that_crashed_leaves_its_lines_as_evidence(
    tmp_path: Path, portal_starter: KitStarter
) -> None:
    log = tmp_path / ".data.portal.log"
    log.write_text("an earlier portal's lines\n")
    with PortalProcess(starter=portal_starter, data_dir=tmp_path / "data") as portal:
        pass
    assert log.read_text() == "an earlier portal's lines\n"  # a clean stop takes back only its own lines
    portal = PortalProcess(starter=portal_starter, data_dir=tmp_path / "data").start()
    assert portal.pid is not None
    os.kill(portal.pid, signal.SIGKILL)
    assert portal.stop() == -signal.SIGKILL
    assert "listening on" in log.read_text()  # killed: its lines stay
