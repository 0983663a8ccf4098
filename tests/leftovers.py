"""The test session leaves the machine as it found it, and says so when it doesn't.

At the start the session gets a temporary directory of its own (``TMPDIR`` for every process
the tests start, pytest's ``tmp_path`` under it too) and, unless a test sets its own, a portal
data dir and a Promptfoo folder of its own: no test writes into the developer's ``data/`` or
``~/.promptfoo``, and parallel workers never share them. At the end, anything a test, a run or
a process it started left in that temporary directory (outside pytest's own ``tmp_path``
folders), and any process still running from the session (one that inherited its environment, or
whose command line names its folder: an MCP stdio server on a working copy), fails the session
with the list.
A passing session removes the directory, and so does one that ran no test (a path that does not
exist, a selection of none); a failing one keeps it and prints where (the logs of the failed tests
are in their ``tmp_path`` folders there). A pytest that ran no session at all (``--help``) removes
it as it ends.
"""

from __future__ import annotations

import getpass
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

SESSION_ENV = "AGENT_EVALS_TEST_TMPDIR"
SETTLE_S = 10.0  # processes a test stopped may still be exiting; wait this long for them


def pytest_configure(config: pytest.Config) -> None:
    promptfoo = Path(__file__).resolve().parents[1] / "node_modules" / ".bin" / "promptfoo"
    if not promptfoo.exists():  # never skip the end-to-end tests in silence: they are the point
        pytest.exit(f"{promptfoo} is missing: run scripts/setup.sh (./test.sh does) first", returncode=2)
    if hasattr(config, "workerinput"):  # a worker of pytest-xdist: its controller made the folder
        root = Path(os.environ[SESSION_ENV])
    else:
        root = Path(tempfile.mkdtemp(prefix="agent-evals-tests-"))
        os.environ[SESSION_ENV] = str(root)
        os.environ["TMPDIR"] = str(root)
        tempfile.tempdir = None  # asked again: now TMPDIR
    worker = config.workerinput["workerid"] if hasattr(config, "workerinput") else "main"  # type: ignore[attr-defined]
    own = root / "pytest-of-session" / worker  # under pytest's tree, so the check leaves it alone
    os.environ["AGENT_EVALS_DATA_DIR"] = str(own / "data" / "portal")
    os.environ["PROMPTFOO_CONFIG_DIR"] = str(own / "promptfoo")
    # Node's own compile cache (npm and plain npx promptfoo turn it on, in $TMPDIR unless told): a
    # cache of Node's, kept where the runner keeps it, so the check below sees only what the kit leaves
    os.environ["NODE_COMPILE_CACHE"] = str(Path(__file__).resolve().parents[1] / "node_modules" / ".cache" / "node-compile")


def left_in(root: Path) -> list[str]:
    """Entries of the session's folder but pytest's ``tmp_path`` tree and this plugin's own."""
    ours = {f"pytest-of-{getpass.getuser()}", "pytest-of-session"}
    return sorted(entry.name for entry in root.iterdir() if entry.name not in ours)


def processes_with(name: str, value: str) -> list[str]:
    """Processes still running with ``name=value`` in their environment (descendants of whoever
    set it), but for this one and its parent."""
    marker = f"{name}={value}".encode()
    return _running(lambda entry: marker in (entry / "environ").read_bytes().split(b"\0"))


def processes_naming(text: str) -> list[str]:
    """Processes still running whose command line holds ``text`` (a folder), but for this one and its
    parent: those that do not inherit the environment of whoever started them, e.g. MCP stdio servers
    (the MCP SDK gives them a minimal one), named by the working copy in their arguments."""
    return _running(lambda entry: text in _command(entry))


def _running(matches: Callable[[Path], bool]) -> list[str]:
    """``pid <pid>: <command>`` of every live process (not a zombie) ``matches`` (given its /proc folder)."""
    mine = {os.getpid(), os.getppid()}
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        try:
            if matches(entry) and (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                found.append(f"pid {entry.name}: {_command(entry)[:200]}")
        except OSError:
            continue
    return found


def _command(entry: Path) -> str:
    return (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()


def _left_running(root: Path) -> list[str]:
    """The session's processes: those that inherited its environment, and those named by its folder."""
    return sorted(set(processes_with(SESSION_ENV, str(root))) | set(processes_naming(str(root))))


# passed, or ran nothing (a path that does not exist, a selection of no test): no failed test's files to keep
_NOTHING_TO_KEEP = (pytest.ExitCode.OK, pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.NO_TESTS_COLLECTED)
_SESSIONS_FINISHED: list[int] = []  # this process's finished sessions (their exit status)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The folder of a pytest that ran no session (``--help``), made at the start, goes with it."""
    if not hasattr(config, "workerinput") and not _SESSIONS_FINISHED and SESSION_ENV in os.environ:
        shutil.rmtree(os.environ[SESSION_ENV], ignore_errors=True)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _SESSIONS_FINISHED.append(int(exitstatus))
    kept = sys.modules.get("agent_evals.agent.worker_sessions")
    if kept is not None:  # stdio servers kept for this process's life (lifetime: worker) stop with it
        kept.WORKER_SESSIONS.close()
    if hasattr(session.config, "workerinput"):  # a worker: the controller checks once, at the very end
        return
    root = Path(os.environ[SESSION_ENV])
    deadline = time.monotonic() + SETTLE_S
    while (processes := _left_running(root)) and time.monotonic() < deadline:
        time.sleep(0.1)
    files = left_in(root) if root.is_dir() else []
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    write = reporter.write_line if reporter is not None else print
    if files or processes:
        write("")
        write(f"LEFT BEHIND by the tests (in {root}):", red=True)
        for line in [*files, *processes]:
            write(f"  {line}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if session.exitstatus in _NOTHING_TO_KEEP:
        shutil.rmtree(root, ignore_errors=True)
    else:
        write(f"the tests' files are kept in {root} (each failed test's tmp_path, with its logs, is under "
              f"pytest-of-{getpass.getuser()}/)")
