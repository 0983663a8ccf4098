"""No pull request is stranded, and no run is misled, when the portal side goes wrong: a portal
killed mid-run, a run killed outright against an external portal, a serving file whose pid came
back for another process, and a second run on a data dir another run's portal holds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_evals.packs.spoke.portal.process import PortalProcess, PortalStartError
from agent_evals.processes import KitStarter
from agent_evals.packs.spoke.portal.serving import Serving, read_serving, write_serving
from agent_evals.packs.spoke.runs import IN_USE, _shared, _start_failure
from agent_evals.suites.discovery import select
from agent_evals.testing.pause_points import PAUSE_ENV
from agent_evals.testing.scripted_openai import HoldAfterTool, ScriptedOpenAIServer
from tests.conftest import PROJECT_ROOT

from .terminal import is_stopped, kill_outright, left_in_temp, pull_requests, runner_env

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)
RUN = [sys.executable, "-m", "agent_evals.cli", "run", "spoke-create"]


@pytest.fixture
def env(tmp_path: Path, slow_models: ScriptedOpenAIServer) -> dict[str, str]:
    return runner_env(tmp_path, slow_models.base_url)


def _data(env: dict[str, str]) -> Path:
    return Path(env["AGENT_EVALS_DATA_DIR"])


def _wait(condition, what: str, timeout: float = 120) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _wait_for_open_pr(runner: subprocess.Popen[bytes], pr_open: HoldAfterTool) -> None:
    """Until a row has opened its pull request and waits for the model (held there by ``pr_open``)."""
    _wait(lambda: pr_open.held.is_set() or runner.poll() is not None, "a pull request")
    if runner.poll() is not None:
        raise AssertionError(f"the run ended ({runner.returncode}) before a pull request was opened:\n"
                             f"{runner.communicate()[0].decode()[-3000:]}")


def test_a_portal_killed_mid_run_is_said_its_pull_requests_cleaned_and_its_log_kept(
    env: dict[str, str], pr_open: HoldAfterTool
) -> None:
    runner = subprocess.Popen([*RUN, "--filter-pattern", "C0[1-4]", "-j", "2", "--no-cache"], env=env, cwd=PROJECT_ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    _wait_for_open_pr(runner, pr_open)
    assert pull_requests(_data(env))
    serving = read_serving(_data(env))
    assert serving is not None
    os.kill(serving.pid, signal.SIGKILL)  # the portal dies under the run
    pr_open.release()
    output = runner.communicate(timeout=300)[0].decode()

    assert runner.returncode == 100, output[-3000:]  # rows are errors; the run itself completed
    assert f"its portal (pid {serving.pid}) died during the run; its log: " in output, output[-3000:]
    assert "Traceback" not in output
    assert pull_requests(_data(env)) == []  # cleaned up through a portal started for the purpose
    kept = [line for line in output.splitlines() if line.startswith("logs of this run")]
    assert kept and "portal-spoke-create.log" in kept[0], output[-2000:]  # the evidence stays
    assert Path(kept[0].split(": ", 1)[1].split(", ")[0]).is_file()
    assert left_in_temp(env) == []


def test_a_run_killed_outright_against_an_external_portal_is_swept_by_the_next_run(
    env: dict[str, str], pr_open: HoldAfterTool, portal_starter: KitStarter
) -> None:
    external_dir = Path(env["TMPDIR"]).parent / "external"
    with PortalProcess(data_dir=external_dir, token="external-token", starter=portal_starter) as portal:
        env.update(PORTAL_URL=portal.url, PORTAL_TOKEN="external-token")
        external = portal.data_dir
        runner = subprocess.Popen([*RUN, "--filter-pattern", "C0[1-4]", "-j", "2", "--no-cache"], env=env,
                                  cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        _wait_for_open_pr(runner, pr_open)
        kill_outright(runner)
        pr_open.release()
        assert pull_requests(external), "the killed run left no PR to sweep"

        again = subprocess.run([*RUN, "--replay", "--filter-pattern", "C09"], env=env, cwd=PROJECT_ROOT,
                               capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stdout[-3000:]
        assert "swept what 1 run(s) that died left: abandoned " in again.stdout, again.stdout[-3000:]
        assert pull_requests(external) == []


def test_a_serving_file_whose_pid_now_belongs_to_another_process_is_ignored(tmp_path: Path) -> None:
    """A portal died without removing its serving file, and its pid came back for another process
    (here: this one). The file is not taken for a portal: no "needs a token" dead end."""
    data_dir = tmp_path / "portal"
    write_serving(data_dir, Serving("http://127.0.0.1:1", os.getpid(), True, None, started="1"))
    assert read_serving(data_dir) is None
    assert _shared(select("spoke-create")[0], data_dir) is None  # the run starts a portal of its own
    write_serving(data_dir, Serving("http://127.0.0.1:1", os.getpid(), True, None))  # written before start times
    assert read_serving(data_dir) is not None  # an old file still counts while its pid runs


def test_a_second_run_on_a_data_dir_another_runs_portal_holds_says_why_in_one_line(env: dict[str, str]) -> None:
    first = subprocess.Popen([*RUN, "--replay", "--filter-pattern", "C01"], env={**env, PAUSE_ENV: "portal-ready"},
                             cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _wait(lambda: is_stopped(first.pid), "the first run to hold its portal")
        second = subprocess.run([*RUN, "--replay", "--filter-pattern", "C02"], env=env, cwd=PROJECT_ROOT,
                                capture_output=True, text=True, timeout=300)
        assert second.returncode == 2, second.stdout[-3000:]
        lines = [line for line in second.stdout.splitlines() if "in use by the portal of another run" in line]
        assert len(lines) == 1 and "AGENT_EVALS_DATA_DIR" in lines[0] and "token" not in lines[0], second.stdout
        assert "Traceback" not in second.stdout + second.stderr
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert first.wait(timeout=300) == 0  # the first run goes on unharmed
    assert pull_requests(_data(env)) == []


def test_a_portal_that_lost_the_race_for_the_data_dir_names_the_reason() -> None:
    """Two runs started at once: the second's portal finds the data dir taken before the first's
    portal said it serves it. The one line says so, not just "exited with code 2"."""
    failure = PortalStartError(f"the portal exited with code 2 during startup: cannot start the portal: data dir "
                               f"/d {IN_USE}; log /d/.portal.portal.log:\ntail")
    line = _start_failure(select("spoke-create")[0], Path("/d"), failure)
    assert "is in use by another portal" in line and "AGENT_EVALS_DATA_DIR" in line and "\n" not in line
    assert line.endswith("the portal's log: /d/.portal.portal.log")


def test_the_in_use_words_are_the_portals_own(tmp_path: Path, portal_starter: KitStarter) -> None:
    with PortalProcess(starter=portal_starter, data_dir=tmp_path / "data"):
        with pytest.raises(PortalStartError) as raised:
            PortalProcess(starter=portal_starter, data_dir=tmp_path / "data").start()
    first = str(raised.value).splitlines()[0]
    assert IN_USE in first and first.startswith("the portal exited with code 2 during startup: cannot start")
    line = _start_failure(select("spoke-create")[0], tmp_path / "data", raised.value)
    assert "is in use by another portal" in line and line.endswith(str(tmp_path / ".data.portal.log"))


def test_promptfoo_killed_by_a_signal_is_one_line_exit_2_and_the_cleanup_still_runs(
    env: dict[str, str], pr_open: HoldAfterTool
) -> None:
    """The out-of-memory killer (or a stray kill) takes Promptfoo mid-run: the runner says so in one
    line instead of exiting 247 in silence, abandons the run's pull requests and keeps the logs."""
    runner = subprocess.Popen([*RUN, "--filter-pattern", "C0[1-4]", "-j", "2", "--no-cache"], env=env, cwd=PROJECT_ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    _wait_for_open_pr(runner, pr_open)
    children = subprocess.run(["pgrep", "-P", str(runner.pid), "-f", r"node_modules/\.bin/promptfoo eval -c "],
                              capture_output=True, text=True).stdout.split()
    assert len(children) == 1, children
    os.kill(int(children[0]), signal.SIGKILL)
    pr_open.release()
    output = runner.communicate(timeout=300)[0].decode()
    assert runner.returncode == 2, output[-3000:]
    assert "suite spoke-create: Promptfoo was killed by SIGKILL after " in output, output[-3000:]
    assert "Traceback" not in output
    assert pull_requests(_data(env)) == []
    assert "logs of this run: " in output


@pytest.mark.parametrize("path", ["run", "plain"])
def test_a_stable_port_taken_between_the_look_and_the_start_gives_the_portal_another(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs at once both find the stable port free; the second's portal cannot listen on it, and
    starts on a free port instead, under ``agent-evals run`` and under plain Promptfoo's beforeAll."""
    import socket

    from agent_evals.packs.spoke import runs

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    monkeypatch.setenv("AGENT_EVALS_DATA_DIR", str(tmp_path / "data" / "portal"))
    monkeypatch.delenv("PORTAL_URL", raising=False)
    monkeypatch.setattr(runs, "stable_port", lambda suite: port)
    monkeypatch.setattr(runs, "_free", lambda port: True)  # it was free when looked at
    suite = select("spoke-create")[0]
    try:
        if path == "run":
            with runs.portal_for(suite, run_id="run-1", log_folder=tmp_path / "logs") as portal:
                assert portal.url and not portal.url.endswith(f":{port}")
        else:
            started = runs.start_plain(suite, os.getpid(), "run-1")
            assert started["started"] and f":{port}" not in started["where"], started
            os.kill(started["started"], signal.SIGTERM)
            deadline = time.monotonic() + 30
            while read_serving(tmp_path / "data" / "portal") is not None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert read_serving(tmp_path / "data" / "portal") is None  # it stopped
    finally:
        taken.close()


def test_the_connections_of_a_portal_that_just_stopped_do_not_keep_the_next_run_off_its_port() -> None:
    """A portal that closed its connections first leaves them in TIME_WAIT for a minute; the next run
    still gets the stable port (its PR links stay the ones `portal serve --suite` serves)."""
    import socket

    from agent_evals.packs.spoke.runs import _free

    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert not _free(port)  # a portal listens there
        client = socket.create_connection(("127.0.0.1", port), timeout=5)
        served, _ = listener.accept()
        served.close()  # the server side closes first: its end goes to TIME_WAIT
        assert client.recv(1) == b""
        client.close()
    assert _free(port)
