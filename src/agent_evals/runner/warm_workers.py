"""Promptfoo's Python processes, forked warm: the kit is imported once per run, not once per process.

The runner starts one server per run (:class:`WarmWorkers`) and gives Promptfoo a launcher as
its interpreter (``warm_launch.py``, see there). For each of Promptfoo's Python wrappers the
launcher asks for, the server forks a *keeper*, which forks the *worker*: the worker takes the
launcher's standard streams, arguments, working directory and environment, and runs the wrapper
as ``python wrapper.py …`` would, only with the kit and the MCP SDK already imported. The keeper
tells the launcher the worker's pid, waits for the worker and sends its exit status back; when the
launcher goes away first (Promptfoo killed it), the keeper stops the worker. Nothing is shared
between workers but the imported code: each one is its own process.

The run's systems start their own server the same way (the portal: ``agent-evals portal serve``,
a :class:`~agent_evals.processes.KitStarter` from :meth:`WarmWorkers.starter`): the server imports
what the systems' servers import (``System.server_modules``) first, forks the one that asked while
it imports the rest, and leaves it to run when the server stops (it stops with its system, or
when the runner is gone). Such a process runs in the server's session, out of the terminal's reach;
its launcher is the runner's stand-in for it, as for Promptfoo.

The server is single-threaded (forking is safe) and exits when the runner that started it is
gone. Its socket is bound and listened on by the runner, which hands it over at the start, so a
launcher that comes early (even before the server has started) waits instead of starting cold.
The socket is in Linux's abstract namespace (no file to leave behind, even after a ``kill -9``;
the launcher script lives in the run's temporary directory). Such a socket
has no file permissions, so the server checks who connects: it runs nothing but Promptfoo's own
wrappers (the files of the project's ``node_modules/promptfoo/dist/src/python/``, by their real
path), and only for a process of this run: the peer's credentials (``SO_PEERCRED``) must be this
user's, and the peer a descendant of the runner; the kit's own command (``-m agent_evals.cli``)
only for a launcher the runner itself started. A launcher it refuses starts cold, as without a
server. Without the server (plain ``npx promptfoo eval``, or if it failed to start),
every process starts cold, as before; ``AGENT_EVALS_WARM=0`` does the same under the runner,
and so does a system without ``os.pidfd_open`` (Linux before 5.3, macOS).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import json
import os
import secrets
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any
import runpy

from agent_evals.processes import COLD, KitStarter, pid_alive, start_detached
from agent_evals.runner import warm_launch
from agent_evals.paths import project_root

# What a provider worker and an assertion import on their first call (the kit imports its SDKs lazily).
PRELOAD = (
    "agent_evals.provider.run",
    "agent_evals.llm.chat_http",  # the model client (its HTTP client, httpx2, is MCP's too)
    "agent_evals.agent.mcp_tools",
    "agent_evals.assertions",
    "mcp.client.client",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "mcp.shared.exceptions",
    "httpx2",
    "httpcore2",  # httpx2's transport: imported at a worker's first connection
    "anyio._backends._asyncio",  # … and anyio's asyncio backend, at its first task group
    "anyio._core._sockets",
    "anyio.streams.stapled",
    "jsonschema",
)
KIT_MODULE = warm_launch.KIT_MODULE  # `-m agent_evals.cli …`: a system's server the runner starts (KitStarter)
ENABLED_ENV = "AGENT_EVALS_WARM"  # 0: every Python process of Promptfoo starts cold, from PROMPTFOO_PYTHON
REAP_WAIT_S = 3.0  # at the end of a run, for the keepers of workers that are still stopping
SYSTEM_REAP_WAIT_S = 0.5  # … and of the systems' servers, which the runner has stopped (unless it left them to run)
SHEBANG_LIMIT = 120  # Linux reads at most 127 bytes of a #! line on older kernels


def supported() -> bool:
    """Fork, file descriptors over Unix sockets and process file descriptors (Linux 5.3 and later)."""
    if not (hasattr(os, "fork") and hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))  # the call exists in Python, but the kernel may lack it
    except OSError:
        return False
    return True


def _preload(modules: tuple[str, ...], *, prepare: tuple[str, ...] = (), tls: bool = False) -> None:
    """Import what the workers need (``modules``); let each module of ``prepare`` make more ready for them
    (its ``warm_workers()``, if it has one: the validators of a system's tools) and, with ``tls``, build
    the TLS context they share. All without the garbage collector (importing makes some 200,000 objects
    and no garbage: about a tenth of the import's CPU), then everything is moved to the permanent
    generation (``gc.freeze``, as the gc docs advise before forking): a worker's collections never
    scan, and so never copy, the pages it shares with the server."""
    gc.disable()
    try:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception as exc:  # noqa: BLE001 - a worker imports what it needs itself then
                print(f"warm workers: cannot preload {name}: {exc}", file=sys.stderr, flush=True)
        for name in prepare:
            hook = getattr(sys.modules.get(name), "warm_workers", None)
            if callable(hook):
                try:
                    hook()
                except Exception as exc:  # noqa: BLE001 - the workers prepare it themselves then
                    print(f"warm workers: {name}.warm_workers failed: {exc}", file=sys.stderr, flush=True)
        if tls:
            from agent_evals.llm.tls import ssl_context  # lazy: the warm server's start-up stays what it was

            try:
                ssl_context()  # built once here (it reads the CA bundle): every worker forked after has it
            except Exception as exc:  # noqa: BLE001 - a worker builds it itself then, and says what is wrong
                print(f"warm workers: cannot build the TLS context: {exc}", file=sys.stderr, flush=True)
    finally:
        gc.freeze()
        gc.enable()


def _check_modules() -> tuple[str, ...]:
    """The modules of the kit's checks, the core's and the built-in packs' (none if they cannot be listed)."""
    try:
        from agent_evals.assertions.registry import check_modules  # lazy: after the systems' servers started

        return check_modules()
    except Exception as exc:  # noqa: BLE001 - a worker imports what it needs itself then
        print(f"warm workers: cannot list the kit's checks: {exc}", file=sys.stderr, flush=True)
        return ()


def promptfoo_wrappers() -> tuple[Path, ...]:
    """Promptfoo's Python entry points in this project (what the server may run)."""
    folder = project_root() / "node_modules" / "promptfoo" / "dist" / "src" / "python"
    return tuple(folder / name for name in warm_launch.WRAPPERS)


def serve(listener: socket.socket, owner_pid: int | None, started: dict[str, int], wrappers: tuple[Path, ...] = (),
          *, system_modules: tuple[str, ...] = (),
          worker_modules: tuple[str, ...] = ()) -> None:
    """Fork a worker for each launcher that connects to ``listener``, until SIGTERM or the owner is gone;
    ``started`` counts them by what they run (the wrapper's file name, the module's name).
    ``wrappers``: the only scripts it runs (default: Promptfoo's); ``system_modules``: what the systems'
    servers import (preloaded first: a system's server that asked meanwhile starts before the workers'
    modules are imported, which it does not use, and before those modules' ``warm_workers()`` prepare
    what the workers need); ``worker_modules``: what the
    workers import for the run's systems (``System.worker_modules``), preloaded with the kit's checks
    (every module a row's grading may import: :func:`agent_evals.assertions.registry.check_modules`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the runner's to handle
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    allowed = {os.path.realpath(p) for p in wrappers or promptfoo_wrappers()}
    keepers: dict[int, str] = {}  # keeper pid: what its process runs
    try:
        _preload(system_modules + PRELOAD)
        early = _arrived(listener, owner_pid, allowed, wait_s=0)
        for request in early:
            if request.name == KIT_MODULE:  # a system's server: it does not use the workers' modules
                _start(listener, request, keepers, started)
        # once the systems' servers that asked early have started (they need none of it): the workers' part
        workers_part = (*worker_modules, *_check_modules())
        _preload(workers_part, prepare=system_modules, tls=True)
        for request in early:
            if request.name != KIT_MODULE:
                _start(listener, request, keepers, started)
        while owner_pid is None or pid_alive(owner_pid):
            _reap(keepers)
            for request in _arrived(listener, owner_pid, allowed, wait_s=1.0):
                _start(listener, request, keepers, started)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        # The runner stops its systems' servers before this server, so their keepers are ending too (reaped,
        # their CPU counts to the run's); one left to run (a forced exit) is not waited for: it stops by
        # itself once the runner is gone.
        _reap(keepers, wait_s=SYSTEM_REAP_WAIT_S)
        _reap({pid: name for pid, name in keepers.items() if name != KIT_MODULE}, wait_s=REAP_WAIT_S)


def _reap(keepers: dict[int, str], wait_s: float = 0.0) -> None:
    """Wait for the keepers that are done (up to ``wait_s`` for the rest): a process the server
    reaped counts its CPU, and its worker's, to the run's. Those reaped leave ``keepers``."""
    deadline = time.monotonic() + wait_s
    while keepers:
        for pid in list(keepers):
            try:
                done = os.waitpid(pid, os.WNOHANG)[0]
            except ChildProcessError:
                done = pid
            if done:
                del keepers[pid]
        if not keepers or time.monotonic() >= deadline:
            return
        time.sleep(0.02)


@dataclass
class Request:
    """What a launcher asked the server to run (admitted: see :func:`_admit`), with its standard streams."""

    connection: socket.socket
    body: dict[str, Any]
    fds: list[int]

    @property
    def argv(self) -> list[str]:
        return list(self.body.get("argv") or [""])

    @property
    def name(self) -> str:
        """What it runs: the module of ``-m <module>``, else the script's file name."""
        argv = self.argv
        return argv[1] if argv[0] == "-m" and len(argv) > 1 else os.path.basename(argv[0])


def _arrived(listener: socket.socket, owner_pid: int | None, allowed: set[str], *, wait_s: float) -> list[Request]:
    """The admitted requests of the launchers that connected within ``wait_s`` (then of those already
    waiting); a launcher refused is told why and left out."""
    requests = []
    while select.select([listener], [], [], wait_s)[0]:
        wait_s = 0
        connection, _ = listener.accept()
        try:
            requests.append(_admit(connection, owner_pid, allowed))
        except (OSError, ValueError) as exc:
            print(f"warm workers: a start failed: {exc}", file=sys.stderr, flush=True)
            connection.close()
    return requests


def _start(listener: socket.socket, request: Request, keepers: dict[int, str], started: dict[str, int]) -> None:
    """Fork the request's keeper (which forks its process); a fork that failed closes what it was sent."""
    try:
        keepers[_fork(listener, request.connection, request.body, request.fds)] = request.name
        started[request.name] = started.get(request.name, 0) + 1
    except OSError as exc:  # the fork failed: the streams it was sent are still open here
        for fd in request.fds:
            os.close(fd)
        print(f"warm workers: a start failed: {exc}", file=sys.stderr, flush=True)
    finally:
        request.connection.close()


class Refused(ValueError):
    """A launcher the server does not serve (it then starts cold)."""


def peer_pid(connection: socket.socket) -> tuple[int, int]:
    """The pid and user id of the process at the other end of ``connection``."""
    ucred = struct.calcsize("3i")
    pid, uid, _ = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, ucred))
    return pid, uid


def peer_problem(connection: socket.socket, owner_pid: int | None) -> str | None:
    """Why the process at the other end of ``connection`` may not use the server, if it may not:
    it must run as this user and descend from the runner (``owner_pid``)."""
    pid, uid = peer_pid(connection)
    if uid != os.getuid():
        return f"process {pid} runs as user {uid}, not {os.getuid()}"
    if owner_pid is not None and not descends_from(pid, owner_pid):
        return f"process {pid} is not one of the run's (the runner is {owner_pid})"
    return None


def parent_of(pid: int) -> int | None:
    """``pid``'s parent (by /proc), None when it is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def descends_from(pid: int, ancestor: int) -> bool:
    """``pid`` is ``ancestor`` or one of its descendants (by /proc's parent links)."""
    for _ in range(64):
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
        parent = parent_of(pid)
        if parent is None:
            return False
        pid = parent
    return False


def _admit(connection: socket.socket, owner_pid: int | None = None, allowed: set[str] | None = None) -> Request:
    """The launcher's request, read and checked (raises :class:`Refused`, having told it why)."""
    why = peer_problem(connection, owner_pid)
    if why is not None:  # not one of the run's processes: nothing it sent is read
        connection.sendall(f"refused: {why}\n".encode())
        raise Refused(f"refused: {why}")
    body, fds = _receive(connection)
    request = Request(connection, body, fds)
    why = _not_served(request.argv, connection, owner_pid, allowed)
    if why is not None:
        for fd in fds:
            os.close(fd)
        connection.sendall(f"refused: {why}\n".encode())
        raise Refused(f"refused: {why}")
    return request


def _not_served(argv: list[str], connection: socket.socket, owner_pid: int | None,
                allowed: set[str] | None) -> str | None:
    """Why the server does not run ``argv`` for this peer, if it does not: one of Promptfoo's wrappers
    (``allowed``), or the kit's command for a launcher the runner started itself."""
    if argv[0] == "-m":
        if argv[1:2] != [KIT_MODULE]:
            return f"-m {' '.join(argv[1:2])} is not the kit's command"
        if owner_pid is not None and parent_of(peer_pid(connection)[0]) != owner_pid:
            return "the kit's command is started warm for the runner only"
        return None
    if allowed is not None and os.path.realpath(str(argv[0])) not in allowed:
        return f"{argv[0]} is not one of Promptfoo's wrappers"
    return None


def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    message, fds, _, _ = socket.recv_fds(connection, 1 << 16, 3)
    if len(fds) != 3 or len(message) < 4:
        for fd in fds:
            os.close(fd)
        raise ValueError("a launcher sent no standard streams")
    (length,) = struct.unpack("!I", message[:4])
    data = message[4:]
    while len(data) < length:
        chunk = connection.recv(length - len(data))
        if not chunk:
            raise ValueError("a launcher hung up mid-request")
        data += chunk
    return json.loads(data), fds


def _fork(listener: socket.socket, connection: socket.socket, request: dict, fds: list[int]) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            listener.close()
            code = _keep(connection, fds, request)
        except BaseException:  # noqa: BLE001 - a keeper never returns into the server's loop
            traceback.print_exc()
        finally:
            os._exit(code)
    for fd in fds:
        os.close(fd)
    return pid


def _keep(connection: socket.socket, fds: list[int], request: dict) -> int:
    """The keeper: fork the worker, tell the launcher its pid, wait, report its status."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    worker = os.fork()
    if worker == 0:
        connection.close()
        _become(fds, request)  # never returns
    for fd in fds:
        os.close(fd)
    try:
        connection.sendall(f"{worker}\n".encode())
        watched = os.pidfd_open(worker)
        while True:
            waiting: list[socket.socket | int] = [connection, watched]
            ready, _, _ = select.select(waiting, [], [])
            if watched in ready:
                break
            if not connection.recv(1):  # the launcher is gone: so is the worker's reason to run
                os.kill(worker, signal.SIGTERM)
                break
    except BaseException:
        os.kill(worker, signal.SIGKILL)  # no worker without a launcher to answer for it
        raise
    _, status = os.waitpid(worker, 0)
    try:
        connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
    except OSError:
        pass
    return 0


def _become(fds: list[int], request: dict) -> None:
    """Turn the forked process into ``python <argv…>`` as the launcher was asked to run it."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGQUIT):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        env: dict[str, str] = request["env"]
        os.environ.clear()
        os.environ.update(env)
        os.chdir(request["cwd"])
        argv: list[str] = request["argv"]
        module = argv[1] if argv[0] == "-m" else None  # python -m <module> …: sys.argv[0] becomes its file
        sys.argv = argv[1:] if module else list(argv)
        sys.path[0] = os.getcwd() if module else os.path.dirname(os.path.abspath(argv[0]))
        extra = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry and entry not in sys.path]
        sys.path[1:1] = extra
        _standard_streams(env)

        try:
            if module:
                runpy.run_module(module, run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(argv[0], run_name="__main__")
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc.code)
        except KeyboardInterrupt:
            code = 128 + signal.SIGINT
        except BaseException:  # noqa: BLE001 - printed as Python prints an uncaught exception
            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    print(value, file=sys.stderr)
    return 1


def _standard_streams(env: Mapping[str, str]) -> None:
    encoding = (env.get("PYTHONIOENCODING") or "").split(":")[0] or "utf-8"
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    sys.stdin = open(0, encoding=encoding, closefd=False)  # noqa: SIM115 - the process's own streams
    sys.stdout = open(1, "w", encoding=encoding, closefd=False, buffering=1 if unbuffered else -1)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding=encoding, errors="backslashreplace", closefd=False, buffering=1)  # noqa: SIM115


class WarmWorkers:
    """The run's warm server and the environment that points Promptfoo at its launcher."""

    def __init__(self, log_path: Path | None = None, stats_path: Path | None = None,
                 wrappers: tuple[Path, ...] = (), *, folder: Path | None = None,
                 system_modules: tuple[str, ...] = (), worker_modules: tuple[str, ...] = ()) -> None:
        """``folder`` holds the launcher (the run's temporary directory; None: one of its own, removed
        at the end); ``wrappers``, what the server may run (default: Promptfoo's wrappers);
        ``system_modules``: what the run's systems' servers import
        (``agent_evals.runner.systems.server_modules``); ``worker_modules``: what the workers import
        for them (``agent_evals.runner.systems.worker_modules``)."""
        self._log_path = log_path
        self._stats_path = stats_path
        self._wrappers = wrappers
        self._system_modules = system_modules
        self._worker_modules = worker_modules
        self._given_folder = folder
        self._folder: Path | None = None
        self._socket = f"@agent-evals-warm-{os.getpid()}-{secrets.token_hex(8)}"  # abstract: nothing on disk
        self._process: subprocess.Popen[bytes] | None = None
        self._started = False

    def __enter__(self) -> WarmWorkers:
        return self.start()

    def start(self) -> WarmWorkers:
        """Start the server (once: again is nothing); :meth:`stop` (``__exit__``) ends it."""
        if self._started:
            return self
        self._started = True
        shebang = f"#!{sys.executable} -SI\n"
        if os.environ.get(ENABLED_ENV) == "0" or not supported() or len(shebang) > SHEBANG_LIMIT:
            return self  # every process starts cold
        folder = self._given_folder or Path(tempfile.mkdtemp(prefix="agent-evals-warm-"))
        folder.mkdir(parents=True, exist_ok=True)
        launcher = folder / "python"
        launcher.write_text(shebang + Path(warm_launch.__file__).read_text(encoding="utf-8"), encoding="utf-8")
        launcher.chmod(0o755)
        log = open(self._log_path, "ab") if self._log_path else subprocess.DEVNULL  # noqa: SIM115
        # Bound here, listened on before the server has started: a launcher that comes at once (the
        # portal's, right after this) waits in the queue instead of finding no server and starting cold.
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(warm_launch.address(self._socket))
            listener.listen(64)
            self._process = start_detached(
                [sys.executable, "-m", "agent_evals.runner.warm_workers", str(listener.fileno()),
                 "--owner-pid", str(os.getpid()), *(["--stats", str(self._stats_path)] if self._stats_path else []),
                 *(arg for path in self._wrappers for arg in ("--wrapper", str(path))),
                 *(arg for module in self._system_modules for arg in ("--system-module", module)),
                 *(arg for module in self._worker_modules for arg in ("--worker-module", module))],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(listener.fileno(),),
            )
        finally:
            listener.close()  # the server's now
            if not isinstance(log, int):  # not subprocess.DEVNULL
                log.close()
        self._folder = folder
        return self

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        """What to add to Promptfoo's environment (nothing when the server is not running)."""
        if self._folder is None or self._process is None or self._process.poll() is not None:
            return {}
        return {
            "PROMPTFOO_PYTHON": str(self._folder / "python"),
            warm_launch.SOCKET_ENV: self._socket,
            warm_launch.PYTHON_ENV: base.get("PROMPTFOO_PYTHON") or sys.executable,
        }

    def starter(self) -> KitStarter:
        """How the run's systems start their own server (``agent-evals portal serve``): forked from this
        server through the launcher; cold when the server is not running."""
        env = self.env(os.environ)
        return KitStarter(env["PROMPTFOO_PYTHON"], env) if env else COLD

    def begin_stop(self) -> None:
        """Ask the server to stop (the run is over); ``__exit__`` waits for it."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop the server and wait for it, remove the launcher (nothing when it never started)."""
        if self._process is not None:
            self.begin_stop()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._folder is not None:
            (self._folder / "python").unlink(missing_ok=True)
            if self._given_folder is None:
                shutil.rmtree(self._folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="the run's warm server (started by the runner)")
    parser.add_argument("listener", type=int, help="the listening socket's file descriptor (bound by the runner)")
    parser.add_argument("--owner-pid", type=int)
    parser.add_argument("--stats", type=Path, help="write how many processes it started (JSON) here at the end")
    parser.add_argument("--wrapper", type=Path, action="append", default=[],
                        help="a script it may run (default: Promptfoo's wrappers)")
    parser.add_argument("--system-module", dest="system_modules", action="append", default=[],
                        help="a module the run's systems' servers import (preloaded first)")
    parser.add_argument("--worker-module", dest="worker_modules", action="append", default=[],
                        help="a module the workers import for the run's systems")
    args = parser.parse_args(argv)
    began = time.monotonic()
    started: dict[str, int] = {}
    try:
        serve(socket.socket(fileno=args.listener), args.owner_pid, started, tuple(args.wrapper),
              system_modules=tuple(args.system_modules),
              worker_modules=tuple(args.worker_modules))
    finally:
        seconds = round(time.monotonic() - began, 1)
        print(f"warm workers: {sum(started.values())} process(es) in {seconds} s", file=sys.stderr, flush=True)
        if args.stats is not None:
            stats = {"started": started, "seconds": seconds}
            args.stats.write_text(json.dumps(stats) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

