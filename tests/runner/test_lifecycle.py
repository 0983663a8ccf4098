"""Runs that are safe to interrupt, share and repeat, tested as a user runs them: Ctrl-C typed in a
real terminal (SIGINT to the whole foreground group) at three moments, a second Ctrl-C, through
``npm run eval`` too; a runner that was killed; a portal already serving the data dir. SIGTERM, as a
cancelled CI job sends it, at every moment of the start and mid-row with a pull request open:
tests/runner/test_interrupt_moments.py."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.processes import KitStarter
from agent_evals.runner.interrupts import SAME_PRESS_S
from agent_evals.testing.pause_points import PAUSE_ENV
from agent_evals.testing.scripted_openai import HoldAfterTool, ScriptedOpenAIServer
from tests.conftest import PROJECT_ROOT

from .terminal import Terminal, eval_descriptions, is_stopped, kill_outright, left_in_temp, pull_requests, runner_env

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)
RUN = [sys.executable, "-m", "agent_evals.cli", "run", "spoke-create"]
NPM_RUN = ["npm", "run", "--silent", "eval", "--", "spoke-create"]
COPIES = ["--filter-pattern", "C0[1-8]", "-j", "4", "--no-cache"]


@pytest.fixture
def env(tmp_path: Path, slow_models: ScriptedOpenAIServer) -> dict[str, str]:
    return runner_env(tmp_path, slow_models.base_url)


def _data(env: dict[str, str]) -> Path:
    return Path(env["AGENT_EVALS_DATA_DIR"])


def _no_portal_left(env: dict[str, str]) -> bool:
    done = subprocess.run(["pgrep", "-f", f"portal serve .*--data-dir {env['AGENT_EVALS_DATA_DIR']}"],
                          capture_output=True, text=True)
    return done.stdout.strip() == ""


def _settle(condition, timeout: float = 10.0) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.mark.parametrize("command", [RUN, NPM_RUN], ids=["agent-evals-outside-portal", "npm-run-eval"])
def test_ctrl_c_mid_conversation_cleans_up_and_marks_the_eval(
    env: dict[str, str], command: list[str], pr_open: HoldAfterTool, portal_starter: KitStarter
) -> None:
    """Through ``npm run eval`` with the run's own portal; straight to the runner with a portal it was
    given (``PORTAL_URL``): the runner abandons the run's PRs there itself, and leaves it serving."""
    with ExitStack() as stack:
        outside = None
        if command is RUN:
            outside = stack.enter_context(PortalProcess(data_dir=_data(env), starter=portal_starter, token="outside"))
            env.update(PORTAL_URL=outside.url, PORTAL_TOKEN="outside")
        terminal = Terminal([*command, *COPIES], env=env, cwd=PROJECT_ROOT)
        terminal.wait_for(pr_open.held.is_set, 120, "a pull request")
        terminal.ctrl_c()
        pr_open.release()
        code = terminal.wait(timeout=120)

        output = terminal.output
        assert code == 130, output[-3000:]
        assert pull_requests(_data(env)) == [], output[-3000:]
        assert pull_requests(_data(env), "abandoned")
        assert "Traceback" not in output, output[-3000:]
        assert "Ctrl-C: stopping Promptfoo, then abandoning this run's pull requests" in output
        assert "is marked [INTERRUPTED] in the viewer" in output
        assert [d for d in eval_descriptions(Path(env["PROMPTFOO_CONFIG_DIR"])) if d.startswith("[INTERRUPTED] ")]
        if outside is not None:
            assert outside.running and PortalAPI(outside.url, token="outside").health()  # not the run's to stop
    assert _settle(lambda: _no_portal_left(env))
    assert left_in_temp(env) == []


def test_ctrl_c_after_the_last_row_cleans_up_and_leaves_the_eval_whole(env: dict[str, str]) -> None:
    """Every row ran; the Ctrl-C comes just before the run's cleanup: the cleanup still happens, the
    run ends 130, and the eval, which is complete, is not marked interrupted."""
    env[PAUSE_ENV] = "cleanup"
    terminal = Terminal([*RUN, "--filter-pattern", "C0[12]", "-j", "2", "--no-cache"], env=env, cwd=PROJECT_ROOT)
    terminal.wait_for(lambda: "paused at cleanup" in terminal.output and is_stopped(terminal.process.pid), 180,
                      "the pause before the cleanup")
    terminal.ctrl_c()
    os.kill(terminal.process.pid, signal.SIGCONT)
    code = terminal.wait(timeout=120)
    output = terminal.output
    assert code == 130, output[-3000:]
    assert "Traceback" not in output
    assert "2 passed" in output and "marked [INTERRUPTED]" not in output, output[-3000:]
    assert pull_requests(_data(env)) == [] and len(pull_requests(_data(env), "abandoned")) == 2
    descriptions = eval_descriptions(Path(env["PROMPTFOO_CONFIG_DIR"]))
    assert descriptions and not any(d.startswith("[INTERRUPTED]") for d in descriptions), descriptions
    assert _settle(lambda: _no_portal_left(env))
    assert left_in_temp(env) == []


def test_a_second_ctrl_c_forces_the_exit_and_the_portal_still_cleans_up(
    env: dict[str, str], pr_open: HoldAfterTool
) -> None:
    terminal = Terminal([*RUN, *COPIES], env=env, cwd=PROJECT_ROOT)
    terminal.wait_for(pr_open.held.is_set, 120, "a pull request")
    terminal.ctrl_c()
    pr_open.release()
    terminal.wait_for(lambda: "Ctrl-C: stopping Promptfoo" in terminal.output, 60, "the first press handled")
    time.sleep(SAME_PRESS_S + 0.1)  # a second press (one within SAME_PRESS_S is the same, forwarded by npm)
    terminal.ctrl_c()
    code = terminal.wait(timeout=30)
    output = terminal.output
    assert code == 130, output[-3000:]
    assert "forced exit: pull requests of run-" in output and "still in place:" in output and "npm run cleanup" in output, output[-2000:]
    assert "Traceback" not in output
    # the runner is gone: its portal abandons the run's PRs and stops by itself
    assert _settle(lambda: pull_requests(_data(env)) == [] and _no_portal_left(env)), pull_requests(_data(env))


def test_a_killed_runner_is_swept_by_the_next_run(env: dict[str, str], tmp_path: Path) -> None:
    """With a portal the runner does not own (``npm run portal``), a runner killed with SIGKILL
    leaves PRs behind; the next run uses that portal (and says so), sweeps them and says so; the
    cleanup leaves the portal serving."""
    portal = subprocess.Popen([sys.executable, "-m", "agent_evals.cli", "portal", "serve", "--port", "0"],
                              env=env, cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _settle(lambda: (_data(env).parent / ".portal.serving.json").is_file(), 30)
        runner = subprocess.Popen([*RUN, *COPIES], env=env, cwd=PROJECT_ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while not pull_requests(_data(env)) and time.monotonic() < deadline:
            time.sleep(0.1)
        kill_outright(runner)
        first = runner.communicate(timeout=30)[0].decode()
        assert "using the portal already serving" in first
        left = pull_requests(_data(env))
        assert left, "the killed run left no PR to sweep"

        url = json.loads((_data(env).parent / ".portal.serving.json").read_text())["url"]
        abandoned_before = len(pull_requests(_data(env), "abandoned"))
        again = subprocess.run([*RUN, "--replay", "--filter-pattern", "C09"], env=env, cwd=PROJECT_ROOT,
                               capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stdout[-3000:]
        assert f"portal: using the portal already serving {_data(env)}: {url}" in again.stdout, again.stdout[-3000:]
        swept = re.search(r"swept what 1 run\(s\) that died left: abandoned (\d+) PR\(s\)", again.stdout)
        assert swept and int(swept[1]) >= len(left), again.stdout[-3000:]  # its workers may have made one more as it died
        assert "Traceback" not in again.stdout + again.stderr
        assert pull_requests(_data(env)) == []
        # the swept PRs and the replay's own (C09 makes one), all abandoned on the portal it used
        assert len(pull_requests(_data(env), "abandoned")) == abandoned_before + int(swept[1]) + 1
        assert left_in_temp(env) == []  # the dead run's temporary directory and its warm server's folder are swept

        cleanup = subprocess.run([sys.executable, "-m", "agent_evals.cli", "cleanup"], env=env, cwd=PROJECT_ROOT,
                                 capture_output=True, text=True, timeout=120)
        assert cleanup.returncode == 0 and "Traceback" not in cleanup.stdout + cleanup.stderr
        assert f"cleanup {_data(env)}: abandoned 0 PR(s)" in cleanup.stdout, cleanup.stdout
        assert portal.poll() is None  # still serving: neither the runs nor the cleanup stopped it
    finally:
        portal.send_signal(signal.SIGTERM)
        portal.wait(timeout=30)
