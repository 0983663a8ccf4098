"""The interpreter the runner gives Promptfoo (``PROMPTFOO_PYTHON``): its Python processes start warm.

Promptfoo starts a Python process for each persistent provider worker, each Python assertion
and each Python hook call, and each one imports the kit (a provider worker: ~0.5 s of CPU, 0.3 s
of it the MCP SDK); the runner starts a system's own server (``-m agent_evals.cli portal serve …``)
the same way (:class:`agent_evals.processes.KitStarter`). Under the runner this file stands in for
``python``: when it is asked to run one of Promptfoo's Python wrappers (or the kit's command), it
hands its standard streams, arguments, working directory and environment to the run's warm server
(``warm_workers.py``), which forks a process that has the kit imported already; this launcher then
stays as that process's stand-in for Promptfoo (or the runner), passing on the signals it gets and
exiting with its status. Anything else (``--version``, a script of the user's), no server to reach,
or a server that refuses it (only Promptfoo's own wrappers and the runner's kit command, for this
run's processes), runs the real interpreter as if this file were not there.

Standard library only, run as ``python -SI warm_launch.py …``: it has to start in milliseconds.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

TYPE_CHECKING = False  # mypy reads it as True; the launcher (one per worker) spares the 5 ms of importing typing
if TYPE_CHECKING:
    from typing import NoReturn

SOCKET_ENV = "AGENT_EVALS_WARM_SOCKET"
PYTHON_ENV = "AGENT_EVALS_COLD_PYTHON"  # the interpreter for everything else (the user's PROMPTFOO_PYTHON)
WRAPPERS = ("persistent_wrapper.py", "wrapper.py")  # Promptfoo's Python entry points (dist/src/python/)
KIT_MODULE = "agent_evals.cli"  # `-m agent_evals.cli …`: the kit's command (a system's server)
UNCATCHABLE = (signal.SIGKILL, signal.SIGSTOP)
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def cold(argv: list[str]) -> NoReturn:
    python = os.environ.get(PYTHON_ENV) or sys.executable
    os.execv(python, [python, *argv])


def warm(connection: socket.socket, argv: list[str]) -> int | None:
    """Run ``argv`` in a process forked by the warm server; its exit status (negative: killed by that
    signal), or None when the server refused it (not one of Promptfoo's wrappers, not this run's)."""
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    reader = connection.makefile("r", encoding="utf-8")
    try:
        socket.send_fds(connection, [struct.pack("!I", len(request)) + request], [0, 1, 2])
        first = reader.readline()
    except (BrokenPipeError, ConnectionResetError):
        return None  # the server refused the peer and closed before reading the request: nothing ran
    if not first.strip().isdigit():
        return None
    pid = int(first)

    def forward(signum: int, _frame: object) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for signum in FORWARDED:
        signal.signal(signum, forward)
    line = reader.readline()
    return int(line) if line.strip() else 1


def address(name: str) -> str:
    """The socket address of ``name``: ``@name`` is Linux's abstract namespace (no file), else a path."""
    return "\0" + name[1:] if name.startswith("@") else name


def main() -> None:
    argv = sys.argv[1:]
    path = os.environ.get(SOCKET_ENV)
    if not path or not argv or (os.path.basename(argv[0]) not in WRAPPERS and argv[:2] != ["-m", KIT_MODULE]):
        cold(argv)
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(address(path))
    except OSError:
        cold(argv)  # no server (the run is over, or it failed): start as usual
    try:
        status = warm(connection, argv)
    except (OSError, ValueError) as exc:
        print(f"agent-evals: the warm start of {argv[0]} failed: {exc}", file=sys.stderr, flush=True)
        status = 1
    if status is None:  # refused: the server says why in its log
        connection.close()
        cold(argv)
    if status < 0:  # killed by a signal: end the same way, so Promptfoo sees what it would have seen
        if -status not in UNCATCHABLE:  # their action cannot be set (it is the default)
            signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


if __name__ == "__main__":
    main()
