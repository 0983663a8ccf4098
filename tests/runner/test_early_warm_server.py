"""The run's warm server starts while the preflight still asks the models (its imports overlap the
check instead of following it), and a check that fails there takes it down again: exit 2, no
process, no run folder, nothing in the temporary directory. A check that fails on the suite's
files leaves nothing either (that it never starts the server: tests/preflight/test_check.py)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from agent_evals.testing.scripted_replies import ChatRequest, Reply
from tests.conftest import PROJECT_ROOT
from tests.leftovers import processes_with

from .terminal import RUN_MARK, Terminal, left_in_temp, runner_env

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)

RUN = [sys.executable, "-m", "agent_evals.cli", "run", "spoke-create", "--filter-pattern", "C01", "-j", "1"]


class RefusedPing:
    """Holds the preflight's ping until :meth:`release`, then answers 401: the check fails on the model."""

    def __init__(self) -> None:
        self.asked, self._released = threading.Event(), threading.Event()

    def __call__(self, request: ChatRequest) -> Reply:
        self.asked.set()
        self._released.wait(60)
        return Reply.error(401, "the key is wrong")

    def release(self) -> None:
        self._released.set()


def _warm_servers(env: dict[str, str]) -> list[str]:
    return [line for line in processes_with(RUN_MARK, env[RUN_MARK]) if "agent_evals.runner.warm_workers" in line]


def test_the_warm_server_runs_during_the_model_check_and_goes_when_it_fails(tmp_path: Path) -> None:
    responder = RefusedPing()
    with ScriptedOpenAIServer(responder) as server:
        env = runner_env(tmp_path, server.base_url)
        terminal = Terminal(RUN, env=env, cwd=PROJECT_ROOT)
        try:
            terminal.wait_for(responder.asked.is_set, 120, "the preflight's ping")
            terminal.wait_for(lambda: bool(_warm_servers(env)), 60, "the warm server, while the check waits")
        finally:
            responder.release()
        code = terminal.wait(timeout=120)
    assert code == 2, terminal.output[-3000:]
    assert "the key is wrong" in terminal.output or "401" in terminal.output, terminal.output[-3000:]
    assert processes_with(RUN_MARK, env[RUN_MARK]) == []
    assert not (tmp_path / "data" / "runs").exists() or list((tmp_path / "data" / "runs").iterdir()) == []
    assert left_in_temp(env) == []


def test_a_check_that_fails_on_the_files_starts_no_warm_server(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(RefusedPing()) as server:
        env = runner_env(tmp_path, server.base_url)
        terminal = Terminal([*RUN, "--filter-pattern", "no-such-case"], env=env, cwd=PROJECT_ROOT)
        code = terminal.wait(timeout=120)
        assert server.request_count == 0  # stopped before the models were asked
    assert code == 2, terminal.output[-3000:]
    assert "the filters select no case" in terminal.output, terminal.output[-3000:]
    assert not (tmp_path / "data" / "runs").exists() or list((tmp_path / "data" / "runs").iterdir()) == []
    assert left_in_temp(env) == []
