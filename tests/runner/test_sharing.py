"""One conversation per row with a model that stays rate-limited; a second portal on a data dir in use
(a portal already serving it is used by ``run`` and ``cleanup``: tests/runner/test_lifecycle.py,
the killed runner's sweep); plain ``npx promptfoo eval -c``."""

from __future__ import annotations

import json
import re
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_evals.testing.scripted_openai import Reply, ScriptedOpenAIServer
from agent_evals.processes import KitStarter
from tests.conftest import PROJECT_ROOT, clean_env

from .terminal import Terminal, pull_requests

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    out = clean_env()
    out.update(AGENT_EVALS_DATA_DIR=str(tmp_path / "data" / "portal"), PROMPTFOO_CONFIG_DIR=str(tmp_path / "pf"),
               PATH=f"{PROJECT_ROOT / 'node_modules' / '.bin'}{os.pathsep}{os.environ['PATH']}")
    return out


def test_a_model_that_answers_429_forever_gives_one_conversation_and_one_error_row(
    env: dict[str, str], tmp_path: Path
) -> None:
    with ScriptedOpenAIServer(lambda r: Reply.error(429, "slow down", headers={"Retry-After": "0.2"})) as server:
        env.update(OPENAI_BASE_URL=server.base_url, AGENT_MODEL="agent-model", USER_MODEL="user-model",
                   LLM_MAX_RETRIES="2", JUDGE_MODEL="none")
        out = tmp_path / "r.json"
        done = subprocess.run(
            [sys.executable, "-m", "agent_evals.cli", "run", "spoke-create", "--no-check", "--filter-pattern", "C01",
             "-o", str(out)], env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300,
        )
        requests = len(server.requests)
    (row,) = json.loads(out.read_text())["results"]["results"]
    assert done.returncode == 100, done.stdout[-2000:]
    assert row["failureReason"] == 2 and row["response"]["metadata"]["error_kind"] == "user_simulator"
    assert "429" in row["error"]  # the kit says what the server answered; Promptfoo does not act on it
    assert requests == 3  # one conversation: the first call and 2 retries, never a re-run of the row


def _serve(env: dict[str, str]) -> subprocess.Popen[bytes]:
    portal = subprocess.Popen([sys.executable, "-m", "agent_evals.cli", "portal", "serve", "--port", "0"], env=env,
                              cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    serving = Path(env["AGENT_EVALS_DATA_DIR"]).parent / ".portal.serving.json"
    deadline = time.monotonic() + 30
    while not serving.is_file():
        assert time.monotonic() < deadline and portal.poll() is None, "the portal did not start"
        time.sleep(0.05)
    return portal


def test_a_second_portal_on_a_data_dir_in_use_says_what_to_do(env: dict[str, str]) -> None:
    portal = _serve(env)
    try:
        second = subprocess.run([sys.executable, "-m", "agent_evals.cli", "portal", "serve", "--port", "0"], env=env,
                                cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        lines = [line for line in (second.stdout + second.stderr).splitlines() if line.strip()]
        assert len(lines) == 1 and "is in use by another running portal" in lines[0] and "PORTAL_URL=http" in lines[0]
    finally:
        portal.send_signal(signal.SIGTERM)
        portal.wait(timeout=30)


def test_reset_lists_active_pull_requests_and_needs_force(
    env: dict[str, str], portal_starter: KitStarter
) -> None:
    from agent_evals.packs.spoke.portal.process import PortalProcess
    from tests.runner.portal_calls import create_pr

    with PortalProcess(starter=portal_starter, data_dir=Path(env["AGENT_EVALS_DATA_DIR"])) as portal:
        create_pr(portal, "crm-dev-weu", headers={"X-Eval-Id": "run-x", "X-Test-Id": "C01#1"})
    reset = [sys.executable, "-m", "agent_evals.cli", "portal", "reset"]
    refused = subprocess.run(reset, env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert "#1 crm-dev-weu (eval run-x)" in refused.stdout and "--force" in refused.stdout
    forced = subprocess.run([*reset, "--force"], env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert forced.returncode == 0 and pull_requests(Path(env["AGENT_EVALS_DATA_DIR"])) == []


def test_plain_npx_promptfoo_eval_runs_a_suite_with_its_own_portal_and_cleanup(env: dict[str, str]) -> None:
    env["AGENT_EVALS_REPLAY_DIR"] = "golden"
    done = subprocess.run(["npx", "promptfoo", "eval", "-c", "evals/spoke-create/promptfooconfig.yaml", "--no-cache",
                           "--filter-pattern", "C0[12]", "--no-table", "-o", str(Path(env["PROMPTFOO_CONFIG_DIR"]) / "o.json")],
                          env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "ModuleNotFoundError" not in done.stdout + done.stderr
    assert re.search(r"agent-evals: portal http://127\.0\.0\.1:\d+ \(started for this run\); run run-\w+", done.stdout)
    rows = json.loads((Path(env["PROMPTFOO_CONFIG_DIR"]) / "o.json").read_text())["results"]["results"]
    assert [r["success"] for r in rows] == [True, True]
    assert pull_requests(Path(env["AGENT_EVALS_DATA_DIR"])) == []
    assert len(pull_requests(Path(env["AGENT_EVALS_DATA_DIR"]), "abandoned")) == 2
    assert not (Path(env["AGENT_EVALS_DATA_DIR"]).parent / ".portal.serving.json").exists()  # its portal stopped
    assert not (Path(env["PROMPTFOO_CONFIG_DIR"]) / "cache").exists()  # --no-cache, as the README says


def test_ctrl_c_in_plain_npx_promptfoo_eval_leaves_no_pull_request(env: dict[str, str]) -> None:
    from agent_evals.golden.record import build_scripts
    from agent_evals.suites.discovery import select
    from agent_evals.testing.conversations import ScriptedConversations
    from agent_evals.testing.scripted_openai import HoldAfterTool, fixed_latency

    scripts = ScriptedConversations(build_scripts(select("spoke-create")[0]))
    pr_open = HoldAfterTool(fixed_latency(scripts, 0.4), "create_spoke_pull_request")
    with ScriptedOpenAIServer(pr_open) as server:
        env.update(OPENAI_BASE_URL=server.base_url, AGENT_MODEL="agent-model", USER_MODEL="user-model",
                   LLM_MAX_RETRIES="0", JUDGE_MODEL="none")
        terminal = Terminal(["npx", "promptfoo", "eval", "-c", "evals/spoke-create/promptfooconfig.yaml",
                             "--filter-pattern", "C0[1-4]", "-j", "4", "--no-table"], env=env, cwd=PROJECT_ROOT)
        data = Path(env["AGENT_EVALS_DATA_DIR"])
        terminal.wait_for(pr_open.held.is_set, 120, "a pull request")
        terminal.ctrl_c()
        pr_open.release()
        terminal.wait(timeout=60)
        deadline = time.monotonic() + 10
        while (pull_requests(data) or (data.parent / ".portal.serving.json").exists()) and time.monotonic() < deadline:
            time.sleep(0.1)  # Promptfoo exited without afterAll: its portal sweeps the run and stops
        assert pull_requests(data) == [], terminal.output[-2000:]
        assert not (data.parent / ".portal.serving.json").exists()
