"""Promptfoo's Python processes forked warm (runner/warm_workers.py, runner/warm_launch.py): a process
started through the launcher behaves as ``python <wrapper> …`` would, with its streams, arguments,
working directory, environment, exit status and signals, and has the kit imported already."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent_evals.runner.warm_workers import WarmWorkers
from tests.conftest import PROJECT_ROOT, clean_env

# Named as Promptfoo's wrapper, so the launcher starts it warm.
PROBE = """
import gc, json, os, signal, sys, time
line = sys.stdin.readline().strip()
if line == "sleep":
    print(f"sleeping {os.getpid()}", flush=True)
    time.sleep(60)
print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "probe": os.environ.get("PROBE"), "line": line,
                  "warm": "mcp.client.client" in sys.modules and "agent_evals.llm.chat_http" in sys.modules,
                  "mcp": "mcp.client.client" in sys.modules, "openai": "openai" in sys.modules,
                  "validators": len(getattr(sys.modules.get("agent_evals.agent.mcp_sdk"), "_VALIDATORS", {})),
                  "schemas": len(getattr(sys.modules.get("agent_evals.assertions.schema_check"), "_VALIDATORS", {})),
                  "modules": sorted(m for m in sys.modules if m.startswith(("agent_evals.packs.", "agent_evals.assertions."))),
                  "tls": "agent_evals.llm.tls" in sys.modules
                         and sys.modules["agent_evals.llm.tls"].ssl_context.cache_info().currsize == 1,
                  "gc": [gc.isenabled(), gc.get_freeze_count()],
                  "path0": sys.path[0], "ppid": os.getppid()}), flush=True)
print("to stderr", file=sys.stderr, flush=True)
sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
"""


@pytest.fixture(scope="module")
def warm_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[WarmWorkers, dict[str, str], Path]]:
    """One server for the tests that need one (its start imports the SDKs, ~2 s of CPU, and a server serves
    any number of launchers): each test gets its own copy of the environment and its own part of the log."""
    # the server runs Promptfoo's wrappers only: here, the probes the tests write (_probe) in this folder
    folder = tmp_path_factory.mktemp("warm")
    wrappers = (folder / "persistent_wrapper.py", folder / "wrappers" / "persistent_wrapper.py")
    with WarmWorkers(folder / "warm.log", folder / "warm.json", wrappers=wrappers) as server:
        yield server, {**clean_env(), **server.env(clean_env())}, folder


@pytest.fixture
def warm(warm_server: tuple[WarmWorkers, dict[str, str], Path]) -> tuple[WarmWorkers, dict[str, str]]:
    server, env, _ = warm_server
    return server, dict(env)


@pytest.fixture
def wrappers(warm_server: tuple[WarmWorkers, dict[str, str], Path]) -> Path:
    """The folder whose persistent_wrapper.py (and wrappers/persistent_wrapper.py) the server runs warm."""
    return warm_server[2]


@pytest.fixture
def warm_log(warm_server: tuple[WarmWorkers, dict[str, str], Path]) -> Callable[[], str]:
    """The server's log lines written since the test began."""
    log = warm_server[2] / "warm.log"
    start = log.stat().st_size if log.exists() else 0
    return lambda: log.read_bytes()[start:].decode()


def _probe(folder: Path, name: str = "persistent_wrapper.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(PROBE)
    return script


def _launch(env: dict[str, str], *args: str, cwd: Path, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen([env["PROMPTFOO_PYTHON"], *args], env=env, cwd=cwd, text=True, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)  # type: ignore[call-overload]


def _listening(name: str) -> bool:
    """The abstract socket ``@name`` is bound (the kernel's list of Unix sockets shows it)."""
    return any(line.split()[-1] == name for line in Path("/proc/net/unix").read_text().splitlines()[1:]
               if len(line.split()) > 7)


def _wait_for_server(env: dict[str, str]) -> None:
    deadline = time.monotonic() + 30
    while not _listening(env["AGENT_EVALS_WARM_SOCKET"]):
        assert time.monotonic() < deadline, "the warm server never listened"
        time.sleep(0.05)


def test_a_wrapper_runs_warm_with_the_launchers_streams_arguments_cwd_and_environment(
    warm: tuple[WarmWorkers, dict[str, str]], wrappers: Path, tmp_path: Path
) -> None:
    _, env = warm
    _wait_for_server(env)
    script = _probe(wrappers / "wrappers")
    work = tmp_path / "work"
    work.mkdir()
    env["PROBE"] = "from the launcher"
    launched = _launch(env, str(script), "providers/agent.py", "call_api", cwd=work)
    out, err = launched.communicate("hello\n", timeout=60)
    assert launched.returncode == 0, err
    seen = json.loads(out)
    assert seen["argv"] == [str(script), "providers/agent.py", "call_api"]
    assert seen["cwd"] == str(work) and seen["probe"] == "from the launcher" and seen["line"] == "hello"
    assert seen["path0"] == str(script.parent)  # as `python script.py` puts it
    assert seen["warm"] is True  # the MCP SDK and the model client were imported before it started
    assert seen["openai"] is False  # the model client needs no SDK (agent_evals.llm.chat_http)
    collecting, frozen = seen["gc"]  # the preload's objects are out of the collector's sight, which is on
    assert collecting is True and frozen > 100_000, seen["gc"]
    assert seen["ppid"] != launched.pid  # forked by the server's keeper, not by the launcher
    assert err == "to stderr\n"


def test_the_exit_status_comes_back_through_the_launcher(warm: tuple[WarmWorkers, dict[str, str]],
                                                         wrappers: Path, tmp_path: Path) -> None:
    _, env = warm
    _wait_for_server(env)
    env["PROBE_EXIT"] = "3"
    launched = _launch(env, str(_probe(wrappers)), cwd=tmp_path)
    launched.communicate("x\n", timeout=60)
    assert launched.returncode == 3


def _sleeping(warm: tuple[WarmWorkers, dict[str, str]], wrappers: Path) -> tuple[subprocess.Popen[str], Path]:
    """A warm worker asleep: its launcher, and the worker's /proc entry."""
    _, env = warm
    _wait_for_server(env)
    launched = _launch(env, str(_probe(wrappers)), cwd=wrappers)
    assert launched.stdin is not None and launched.stdout is not None
    launched.stdin.write("sleep\n")
    launched.stdin.flush()
    line = launched.stdout.readline()
    assert line.startswith("sleeping "), line
    return launched, Path("/proc") / line.split()[1]


def test_a_signal_to_the_launcher_reaches_the_worker_and_ends_the_launcher_the_same_way(
    warm: tuple[WarmWorkers, dict[str, str]], wrappers: Path
) -> None:
    launched, _ = _sleeping(warm, wrappers)
    launched.send_signal(signal.SIGTERM)
    assert launched.wait(timeout=30) == -signal.SIGTERM  # as Promptfoo sees a worker it terminated


def test_a_worker_killed_outright_ends_its_launcher_the_same_way(warm: tuple[WarmWorkers, dict[str, str]],
                                                                 wrappers: Path) -> None:
    """SIGKILL, whose action cannot be set: the launcher still ends killed by it (not with a traceback)."""
    launched, worker = _sleeping(warm, wrappers)
    os.kill(int(worker.name), signal.SIGKILL)
    assert launched.wait(timeout=30) == -signal.SIGKILL


def test_a_launcher_killed_outright_takes_its_worker_with_it(warm: tuple[WarmWorkers, dict[str, str]],
                                                             wrappers: Path) -> None:
    launched, worker = _sleeping(warm, wrappers)
    assert worker.exists()
    launched.kill()
    launched.wait(timeout=30)
    deadline = time.monotonic() + 30
    while worker.exists() and ") Z " not in _stat(worker):  # gone, or dead and waiting for its keeper
        assert time.monotonic() < deadline, "the worker outlived its launcher"
        time.sleep(0.05)


def _stat(proc: Path) -> str:
    try:
        return (proc / "stat").read_text()
    except OSError:
        return ") Z "


def test_a_script_that_is_not_promptfoos_wrapper_runs_cold(
    warm: tuple[WarmWorkers, dict[str, str]], warm_log: Callable[[], str], tmp_path: Path
) -> None:
    """Named like a wrapper, asked for by a process of the run, but another file: the server refuses it."""
    _, env = warm
    _wait_for_server(env)
    launched = _launch(env, str(_probe(tmp_path / "elsewhere")), cwd=tmp_path)
    out, _ = launched.communicate("x\n", timeout=60)
    assert launched.returncode == 0 and json.loads(out)["warm"] is False
    assert "persistent_wrapper.py is not one of Promptfoo's wrappers" in warm_log()


def test_a_process_that_is_not_the_runs_runs_cold(warm: tuple[WarmWorkers, dict[str, str]], wrappers: Path,
                                                  warm_log: Callable[[], str], tmp_path: Path) -> None:
    """A process of the same user outside the run (an orphan, adopted by init) asks for a real wrapper: the
    server checks its credentials (SO_PEERCRED) and ancestry, and refuses."""
    _, env = warm
    _wait_for_server(env)
    script = _probe(wrappers)
    out, done, go = tmp_path / "out.json", tmp_path / "done", tmp_path / "go"
    # the background part starts the launcher once its shell has exited (`go`), so that init has adopted it
    command = '(while [ ! -e "$4" ]; do sleep 0.02; done; "$0" "$1" < /dev/null > "$2" 2>/dev/null; touch "$3") &'
    subprocess.run(["sh", "-c", command, env["PROMPTFOO_PYTHON"], str(script), str(out), str(done), str(go)],
                   env=env, check=True, start_new_session=True)
    go.touch()
    deadline = time.monotonic() + 60
    while not done.exists():  # the orphan's own end: a failure guard only
        assert time.monotonic() < deadline, "the orphan never finished"
        time.sleep(0.05)
    assert json.loads(out.read_text())["warm"] is False
    assert "is not one of the run's (the runner is" in warm_log()


def test_peer_credentials_name_who_is_refused() -> None:
    import socket

    from agent_evals.runner.warm_workers import descends_from, peer_problem

    left, right = socket.socketpair()
    with left, right:
        assert peer_problem(left, os.getpid()) is None  # this process itself, its own user
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            assert descends_from(child.pid, os.getpid()) and not descends_from(os.getpid(), child.pid)
            assert peer_problem(left, child.pid) == f"process {os.getpid()} is not one of the run's (the runner is {child.pid})"
        finally:
            child.kill()
            child.wait()


def test_anything_else_and_no_server_run_the_real_interpreter(tmp_path: Path) -> None:
    with WarmWorkers() as server:
        env = {**clean_env(), **server.env(clean_env())}
        version = subprocess.run([env["PROMPTFOO_PYTHON"], "--version"], env=env, capture_output=True, text=True)
        assert version.returncode == 0 and version.stdout.startswith("Python 3")
    # the run is over: its launcher (if kept) starts everything cold
    launcher = tmp_path / "python"
    launcher.write_text(f"#!{sys.executable} -SI\n" + Path(PROJECT_ROOT / "src/agent_evals/runner/warm_launch.py").read_text())
    launcher.chmod(0o755)
    env.update(PROMPTFOO_PYTHON=str(launcher), AGENT_EVALS_WARM_SOCKET=str(tmp_path / "gone.sock"))
    cold = _launch(env, str(_probe(tmp_path / "w")), cwd=tmp_path)
    out, _ = cold.communicate("x\n", timeout=60)
    assert cold.returncode == 0 and json.loads(out)["warm"] is False


def test_the_runners_promptfoo_workers_start_warm(isolated: Path) -> None:
    """A replay through the runner: no worker starts cold (a counting interpreter given as
    PROMPTFOO_PYTHON sees only Promptfoo's version check) and the server counts the ones it forked,
    the portal (``-m agent_evals.cli portal serve``) among them."""
    counter = isolated / "cold.count"
    shim = isolated / "python"
    shim.write_text(f'#!/bin/sh\necho "$1" >> "{counter}"\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PROMPTFOO_PYTHON": str(shim)}
    done = subprocess.run([sys.executable, "-m", "agent_evals.cli", "run", "spoke-qa", "--replay", "-j", "2"],
                          env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    cold = counter.read_text().split() if counter.exists() else []
    assert all(not arg.endswith("wrapper.py") for arg in cold), cold
    runs = list((isolated / "data" / "runs").glob("run-*/warm-workers.json"))
    assert len(runs) == 1
    stats = json.loads(runs[0].read_text())
    assert set(stats["started"]) == {"persistent_wrapper.py", "agent_evals.cli"}, stats
    assert stats["started"]["persistent_wrapper.py"] == 2, stats
    # the portal, forked: twice when another test's portal took the suite's port between the look and
    # the start (the run then starts its portal on any free port: agent_evals.packs.spoke.runs)
    assert stats["started"]["agent_evals.cli"] in (1, 2), stats


def test_a_server_preloads_what_a_workers_first_row_needs(tmp_path: Path) -> None:
    """The server preloads what a worker needs (the probe shows what its forked worker found imported): the
    portal's server module compiled the validators of its tools' output schemas and of the spoke
    schema there (its ``warm_workers()``), the TLS context is built, and the modules a worker's first
    row imports are: a worker's first MCP session and first grading find them."""
    from agent_evals.assertions.registry import check_modules
    from agent_evals.packs.spoke.system import PortalSystem

    wrappers = (tmp_path / "persistent_wrapper.py",)
    with WarmWorkers(wrappers=wrappers, system_modules=PortalSystem.server_modules,
                     worker_modules=PortalSystem.worker_modules) as server:
        env = {**clean_env(), **server.env(clean_env())}
        _wait_for_server(env)
        launched = _launch(env, str(_probe(tmp_path)), cwd=tmp_path)
        out, err = launched.communicate("x\n", timeout=60)
    assert launched.returncode == 0, err
    seen = json.loads(out)
    assert seen["mcp"] is True and seen["openai"] is False, seen
    assert seen["ppid"] != launched.pid  # warm all the same: forked by the server
    assert seen["validators"] == 10 and seen["tls"] is True, seen
    # what a worker's first row imports: the kit's checks (core and packs'), the system's worker modules;
    # and the spoke schema's validator, compiled (the check's cache holds it)
    assert set(check_modules()) | set(PortalSystem.worker_modules) <= set(seen["modules"]), seen["modules"]
    assert seen["schemas"] == 1, seen


def test_agent_evals_warm_0_starts_everything_cold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_EVALS_WARM", "0")
    with WarmWorkers() as server:
        assert server.env(clean_env()) == {}  # Promptfoo keeps PROMPTFOO_PYTHON (or the project's Python)


SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")  # one another user may run (the venv's may not be)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("runuser") is None or SYSTEM_PYTHON is None,
                    reason="needs root to act as another user, and a system python3")
def test_another_user_is_refused(
    warm: tuple[WarmWorkers, dict[str, str]], warm_log: Callable[[], str]
) -> None:
    """The socket has no file permissions (abstract namespace): the kernel's peer credentials decide."""
    _, env = warm
    _wait_for_server(env)
    knock = ("import socket, sys\ns = socket.socket(socket.AF_UNIX)\ns.connect('\\0' + sys.argv[1][1:])\n"
             "try:\n    s.sendall(b'x')\n    print(s.recv(100).decode() or 'closed')\n"
             "except (ConnectionResetError, BrokenPipeError):\n    print('closed')\n")
    done = subprocess.run(["runuser", "-u", "nobody", "--", str(SYSTEM_PYTHON), "-c", knock, env["AGENT_EVALS_WARM_SOCKET"]],
                          capture_output=True, text=True, timeout=60)
    answer = done.stdout.strip()
    assert answer == "closed" or answer.startswith("refused: process"), done.stdout + done.stderr  # nothing ran
    deadline = time.monotonic() + 30
    while "refused: process" not in warm_log() or "runs as user 65534" not in warm_log():
        assert time.monotonic() < deadline, warm_log()
        time.sleep(0.05)


# -- a system's own server (the portal), started by the runner through the launcher (KitStarter)


def test_the_kit_command_the_runner_starts_is_forked_with_its_arguments_output_and_exit_status(tmp_path: Path) -> None:
    """``-m agent_evals.cli …`` from a launcher the runner (here this process, the server's owner) started:
    forked by the server (counted under the module's name), with what ``python -m agent_evals.cli`` gives."""
    stats = tmp_path / "warm.json"
    with WarmWorkers(stats_path=stats) as server:
        starter = server.starter()
        env = {**clean_env(), **starter.env}
        helped = subprocess.run(starter.command("cases", "--help"), env=env, capture_output=True, text=True, timeout=60)
        wrong = subprocess.run(starter.command("no-such-command"), env=env, capture_output=True, text=True, timeout=60)
    cold = subprocess.run([sys.executable, "-m", "agent_evals.cli", "no-such-command"], env=clean_env(),
                          capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: agent-evals cases"), helped.stderr
    assert (wrong.returncode, wrong.stdout, wrong.stderr) == (cold.returncode, cold.stdout, cold.stderr) != (0, "", "")
    assert json.loads(stats.read_text())["started"] == {"agent_evals.cli": 2}


def test_the_kit_command_is_started_warm_for_the_runner_only(tmp_path: Path) -> None:
    """A launcher asking for the kit's command whose parent is not the runner (a shell between them):
    refused, it starts cold, and the command still works."""
    log = tmp_path / "warm.log"
    with WarmWorkers(log) as server:
        starter = server.starter()
        done = subprocess.run(["sh", "-c", '"$0" "$@"; exit $?', *starter.command("cases", "--help")],
                              env={**clean_env(), **starter.env}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("usage: agent-evals cases"), done.stderr
    assert "the kit's command is started warm for the runner only" in log.read_text()


def test_a_portal_started_warm_is_the_process_its_serving_file_names_and_a_crash_shows_as_one(tmp_path: Path) -> None:
    """The run's portal, forked by the warm server: ``pid`` is the portal's own (its serving file's, not
    the launcher's), it runs in the server's session, and SIGKILL of it ends the launcher the same way,
    so the helper sees a crash (and keeps the log) as it would of a portal started cold."""
    from agent_evals.packs.spoke.portal.process import PortalProcess
    from agent_evals.packs.spoke.portal.serving import read_serving
    from agent_evals.packs.spoke.system import PortalSystem
    from agent_evals.runner.warm_workers import descends_from

    stats = tmp_path / "warm.json"
    with WarmWorkers(stats_path=stats, system_modules=PortalSystem.server_modules) as server:
        portal = PortalProcess(data_dir=tmp_path / "data", token=PortalProcess.new_token(), starter=server.starter())
        portal.start()
        try:
            serving = read_serving(tmp_path / "data")
            assert serving is not None and portal.pid == serving.pid
            assert server._process is not None and descends_from(portal.pid, server._process.pid)
            assert os.getsid(portal.pid) == os.getsid(server._process.pid) != os.getsid(0)
            os.kill(portal.pid, signal.SIGKILL)
            deadline = time.monotonic() + 30
            while portal.running:
                assert time.monotonic() < deadline, "the launcher outlived its portal"
                time.sleep(0.05)
        finally:
            code = portal.stop()
    assert code == -signal.SIGKILL
    assert portal.log_file.exists()  # a crash leaves its log as evidence
    portal.log_file.unlink()
    assert json.loads(stats.read_text())["started"] == {"agent_evals.cli": 1}
