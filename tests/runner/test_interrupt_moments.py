"""Ctrl-C (typed in a real terminal: SIGINT to the whole foreground group) and SIGTERM at every
moment of a run's start: during the preflight, while the portal starts, right after it answers,
while Promptfoo starts, and during the first row, once its pull request is open. Each ends the same
way: exit 130 (143), the line saying what happens, no pull request left active (the first row's
abandoned), no process left, nothing left in the temporary directory.

The moments are hit exactly, not by timing: the runner stops itself at a named pause point
(``AGENT_EVALS_PAUSE_AT``, ``agent_evals.testing.pause_points``), the test sends the signal and
lets it go on; in the first row, the model's reply after ``create_spoke_pull_request`` is held.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_evals.golden.record import build_scripts
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.processes import KitStarter
from agent_evals.suites.discovery import select
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.pause_points import PAUSE_ENV
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from agent_evals.testing.scripted_replies import HoldAfterTool
from tests.conftest import PROJECT_ROOT
from tests.leftovers import processes_with

from .terminal import (
    RUN_MARK,
    Terminal,
    eval_descriptions,
    is_stopped,
    left_in_temp,
    pull_requests,
    runner_env,
)

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)


class FirstRowWithItsPullRequest(HoldAfterTool):
    """The golden plans played live; the model's reply after the first row opened its pull request
    is held until the test has interrupted (the preflight's pings pass)."""

    def __init__(self) -> None:
        super().__init__(ScriptedConversations(build_scripts(select("spoke-create")[0])), "create_spoke_pull_request",
                         limit_s=60)


@pytest.fixture
def models() -> Iterator[FirstRowWithItsPullRequest]:
    responder = FirstRowWithItsPullRequest()
    with ScriptedOpenAIServer(responder) as server:
        responder.server = server  # type: ignore[attr-defined]
        yield responder
    responder.release()


@pytest.fixture
def env(tmp_path: Path, models: FirstRowWithItsPullRequest) -> dict[str, str]:
    return runner_env(tmp_path, models.server.base_url)  # type: ignore[attr-defined]


RUN = [sys.executable, "-m", "agent_evals.cli", "run", "spoke-create", "--filter-pattern", "C01", "-j", "1"]
PAUSED = ["preflight", "portal-starting", "portal-ready", "promptfoo-starting"]


def _interrupt(terminal: Terminal, how: str) -> None:
    if how == "ctrl-c":
        terminal.ctrl_c()  # the terminal's SIGINT reaches the whole foreground group
    else:
        terminal.process.send_signal(signal.SIGTERM)  # what a CI runner sends the job's process


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
@pytest.mark.parametrize("moment", [*PAUSED, "first-row"])
def test_an_interrupt_at_each_moment_of_the_start(env: dict[str, str], models: FirstRowWithItsPullRequest, tmp_path: Path,
                                                  moment: str, how: str) -> None:
    if moment in PAUSED:
        env[PAUSE_ENV] = moment
    check = [] if moment == "preflight" else ["--no-check"]  # past the check, it only costs time here
    terminal = Terminal([*RUN, *check], env=env, cwd=PROJECT_ROOT)
    if moment in PAUSED:
        terminal.wait_for(lambda: f"paused at {moment}" in terminal.output and is_stopped(terminal.process.pid), 120,
                          f"the pause at {moment}")
        if moment in ("portal-starting", "portal-ready"):  # Promptfoo starts beside the portal, waits for it
            running = processes_with(RUN_MARK, env[RUN_MARK])
            assert [p for p in running if " eval -c " in p], running
        if moment == "portal-starting":  # until Promptfoo has made its eval and waits in beforeAll
            terminal.wait_for(lambda: eval_descriptions(tmp_path / "promptfoo") != [], 120,
                              "Promptfoo's eval")
        _interrupt(terminal, how)
        os.kill(terminal.process.pid, signal.SIGCONT)
    else:
        terminal.wait_for(models.held.is_set, 120, "the first row's pull request")
        _interrupt(terminal, how)
        models.release()
    code = terminal.wait(timeout=120)

    output = terminal.output
    assert code == (130 if how == "ctrl-c" else 143), output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    said = "Ctrl-C" if how == "ctrl-c" else "SIGTERM"
    if moment == "preflight":  # nothing started yet: the command just stops
        assert ("agent-evals run: interrupted" if how == "ctrl-c" else "agent-evals run: terminated (SIGTERM)") in output
    else:
        assert f"{said}: stopping Promptfoo, then abandoning this run's pull requests" in output, output[-3000:]
    assert pull_requests(tmp_path / "data" / "portal") == []
    if moment == "first-row":  # the row's pull request was open: abandoned, by the run
        assert len(pull_requests(tmp_path / "data" / "portal", "abandoned")) == 1
    assert processes_with(RUN_MARK, env[RUN_MARK]) == []  # the portal, Promptfoo, its workers, the warm server: all gone
    assert left_in_temp(env) == []  # nothing in the temporary directory, nor the run's
    evals = eval_descriptions(tmp_path / "promptfoo")
    if moment == "first-row":
        assert len(evals) == 1, evals  # its one row was saved, as Promptfoo stopped
    elif moment == "portal-starting":  # nothing ran: the eval Promptfoo made meanwhile is deleted
        assert evals == [], output[-3000:]
    else:  # at portal-ready the suite's thread may hand the portal over before the signal is handled: that
        # eval, started, is marked interrupted; none is left looking like a run
        assert all(description.startswith("[INTERRUPTED]") for description in evals), output[-3000:]


def test_ctrl_c_during_npm_run_cleanup_is_one_line_and_leaves_nothing(env: dict[str, str], tmp_path: Path,
                                                                     portal_starter: KitStarter) -> None:
    """``npm run cleanup`` starts a portal on each data dir a run used; a Ctrl-C while it starts
    ends the command with one line and exit 130, and the portal and its log go with it."""
    data = tmp_path / "data" / "portal"
    with PortalProcess(data_dir=data, starter=portal_starter):
        pass  # the data dir now exists, as a run leaves it: cleanup will start a portal on it
    assert (data / "portal.json").is_file()
    terminal = Terminal(["npm", "run", "--silent", "cleanup"], env={**env, PAUSE_ENV: "portal-starting"},
                        cwd=PROJECT_ROOT)
    terminal.wait_for(lambda: "paused at portal-starting" in terminal.output and is_stopped(_runner(terminal)), 120,
                      "the cleanup's portal to start")
    terminal.ctrl_c()
    os.kill(_runner(terminal), signal.SIGCONT)
    code = terminal.wait(timeout=120)
    output = terminal.output
    assert code == 130, output
    assert "agent-evals cleanup: interrupted" in output and "Traceback" not in output, output
    assert processes_with(RUN_MARK, env[RUN_MARK]) == []
    assert left_in_temp(env) == []
    assert not (data.parent / ".portal.portal.log").exists()  # the portal stopped cleanly: its lines taken back


def _runner(terminal: Terminal) -> int:
    """The agent-evals process under ``npm run`` (npm's own process is the terminal's child)."""
    for line in processes_with(RUN_MARK, terminal.env[RUN_MARK]):
        pid, command = line.split(": ", 1)
        if "agent-evals cleanup" in command or "agent_evals.cli cleanup" in command:
            return int(pid.split()[1])
    return terminal.process.pid
