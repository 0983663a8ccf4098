"""``npm run cleanup`` while a run uses the shared portal leaves that run's pull requests alone; a run
whose pull requests were taken from under it says so with an error, never a failure."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent_evals.golden.record import build_scripts
from agent_evals.processes import KitStarter
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.runner.cleanup_command import cleanup_command
from agent_evals.suites.manifest import RunManifest, runs_dir
from agent_evals.suites.discovery import select
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from agent_evals.testing.scripted_replies import ChatRequest, Reply
from tests.conftest import PROJECT_ROOT, clean_env
from tests.runner.portal_calls import create_pr

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)


def _dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


def test_cleanup_leaves_the_pull_requests_of_runs_still_going(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    portal_starter: KitStarter,
) -> None:
    monkeypatch.setenv("AGENT_EVALS_DATA_DIR", str(tmp_path / "data" / "portal"))
    RunManifest("run-alive", "live").save(runs_dir() / "run-alive")  # this process: a run still going
    RunManifest("run-dead", "live", pid=_dead_pid()).save(runs_dir() / "run-dead")
    with PortalProcess(starter=portal_starter, data_dir=tmp_path / "data" / "portal") as portal:
        alive = create_pr(portal, "crm-dev-weu", headers={"X-Eval-Id": "run-alive.spoke-create", "X-Test-Id": "C01#1"})
        dead = create_pr(portal, "crm-dev-gwc", headers={"X-Eval-Id": "run-dead.spoke-create", "X-Test-Id": "C02#1"})
        api = PortalAPI(portal.url)

        assert cleanup_command(portal.url, None, None) == 0
        assert capsys.readouterr().out == (
            f"cleanup {portal.url}: abandoned 1 PR(s), left 1 PR(s) of runs still going (#{alive})\n"
        )
        assert api.get_pull_request(alive)["status"] == "active"
        assert api.get_pull_request(dead)["status"] == "abandoned"

        assert cleanup_command(portal.url, None, "run-alive.spoke-create") == 1
        assert capsys.readouterr().out == (
            f"cleanup: run-alive is still running (pid {os.getpid()}): its pull requests are left to it (it cleans up "
            "when it ends, Ctrl-C included)\n"
        )
        assert api.get_pull_request(alive)["status"] == "active"


def test_npm_run_cleanup_during_a_live_run_on_the_shared_portal(tmp_path: Path) -> None:
    """The issue's scenario: `npm run portal`, a live run on it, `npm run cleanup` while its case holds a PR."""
    env = {**clean_env(), "AGENT_EVALS_DATA_DIR": str(tmp_path / "data" / "portal"),
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / "pf")}
    scripts = ScriptedConversations(build_scripts(select("spoke-create")[0]))
    created, released = threading.Event(), threading.Event()

    def responder(request: ChatRequest) -> Reply:
        if request.model == "agent-model" and any(
                m.get("role") == "tool" and "/repos/spokes/pullrequest/" in str(m.get("content"))
                for m in request.messages) and not released.is_set():
            created.set()  # the PR exists: hold the agent's last reply until the cleanup ran
            released.wait(120)
        return scripts(request)

    portal = subprocess.Popen([sys.executable, "-m", "agent_evals.cli", "portal", "serve", "--port", "0"], env=env,
                              cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        serving = tmp_path / "data" / ".portal.serving.json"
        deadline = time.monotonic() + 60
        while not serving.is_file():
            assert time.monotonic() < deadline and portal.poll() is None, "the portal did not start"
            time.sleep(0.05)
        with ScriptedOpenAIServer(responder) as server:
            env.update(OPENAI_BASE_URL=server.base_url, AGENT_MODEL="agent-model", USER_MODEL="user-model",
                       JUDGE_MODEL="none", LLM_MAX_RETRIES="0")
            run = subprocess.Popen([sys.executable, "-m", "agent_evals.cli", "run", "spoke-create", "--filter-pattern",
                                    "C01 ", "-o", str(tmp_path / "r.json")], env=env, cwd=PROJECT_ROOT,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            try:
                assert created.wait(180), "the run never created its pull request"
                cleanup = subprocess.run(["npm", "run", "cleanup"], env=env, cwd=PROJECT_ROOT, capture_output=True,
                                         text=True, timeout=120)
            finally:
                released.set()
            out, _ = run.communicate(timeout=300)
        assert cleanup.returncode == 0, cleanup.stdout + cleanup.stderr
        assert "abandoned 0 PR(s), left 1 PR(s) of runs still going" in cleanup.stdout, cleanup.stdout
        assert run.returncode == 0, out[-3000:]
        assert "  C01    PASS" in out
        (row,) = json.loads((tmp_path / "r.json").read_text())["results"]["results"]
        assert row["success"] and row["response"]["metadata"]["cleanup"]["by"] == "provider"
    finally:
        portal.send_signal(signal.SIGTERM)
        portal.wait(timeout=30)
