"""Run a command the way a user does in a terminal: in a pseudo-terminal, as the foreground
process group, so that writing Ctrl-C (``\\x03``) sends SIGINT to the whole group, exactly as
a terminal's line discipline does."""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import sqlite3
import subprocess
import termios
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

CTRL_C = b"\x03"


class Terminal:
    def __init__(self, command: Sequence[str], *, env: dict[str, str], cwd: Path) -> None:
        self.env = env
        master, slave = pty.openpty()

        def controlling_terminal() -> None:
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

        self.process = subprocess.Popen(
            list(command), stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
            preexec_fn=controlling_terminal, close_fds=True,
        )
        os.close(slave)
        self._master = master
        self._chunks: list[bytes] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 4096)
            except OSError:
                return
            if not chunk:
                return
            self._chunks.append(chunk)

    @property
    def output(self) -> str:
        return b"".join(self._chunks).decode("utf-8", "replace").replace("\r\n", "\n")

    def ctrl_c(self) -> None:
        os.write(self._master, CTRL_C)

    def wait_for(self, condition: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.process.poll() is not None:
                raise AssertionError(f"exited ({self.process.returncode}) before {what}:\n{self.output[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}:\n{self.output[-3000:]}")
            time.sleep(0.05)

    def wait(self, timeout: float = 60) -> int:
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=5)
        os.close(self._master)
        return code


def kill_outright(runner: subprocess.Popen[bytes]) -> None:
    """SIGKILL for a runner started with ``start_new_session`` and, at the same moment, for every
    session it started (Promptfoo, its workers and hooks): a machine that dies, so nothing gets to
    clean up. (Promptfoo alone would get SIGTERM from the runner's death and clean up itself.)"""
    children = subprocess.run(["pgrep", "-P", str(runner.pid)], capture_output=True, text=True).stdout.split()
    for child in children:
        try:
            os.killpg(os.getpgid(int(child)), signal.SIGKILL)
        except ProcessLookupError:
            pass
    os.killpg(runner.pid, signal.SIGKILL)
    runner.wait(timeout=30)


RUN_MARK = "AGENT_EVALS_TEST_RUN_MARK"  # every process of one test's run carries it: none may be left


def runner_env(tmp_path: Path, model_url: str) -> dict[str, str]:
    """The environment of a runner a test starts as a user would: a data dir, Promptfoo folder and
    ``TMPDIR`` of its own (checked for leftovers with :func:`left_in_temp`), the scripted models at
    ``model_url``, Node 22 first on PATH, and a mark every process of the run inherits."""
    from tests.conftest import PROJECT_ROOT, clean_env

    (tmp_path / "tmp").mkdir(exist_ok=True)
    return {
        **clean_env(),
        "AGENT_EVALS_DATA_DIR": str(tmp_path / "data" / "portal"), "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo"),
        "OPENAI_BASE_URL": model_url, "AGENT_MODEL": "agent-model", "USER_MODEL": "user-model",
        "LLM_MAX_RETRIES": "0", "JUDGE_MODEL": "none", "TMPDIR": str(tmp_path / "tmp"),
        "PATH": f"{PROJECT_ROOT / 'node_modules' / '.bin'}{os.pathsep}{os.environ['PATH']}",
        RUN_MARK: uuid.uuid4().hex,
    }


def is_stopped(pid: int) -> bool:
    """The process is stopped (SIGSTOP): e.g. the runner at a pause point (``AGENT_EVALS_PAUSE_AT``)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "T"


def left_in_temp(env: dict[str, str]) -> list[str]:
    """What is left in the run's ``TMPDIR`` and in the temporary directory of any run folder."""
    runs = Path(env["AGENT_EVALS_DATA_DIR"]).parent / "runs"
    return sorted(os.listdir(env["TMPDIR"])) + [str(p) for p in (runs.glob("*/tmp") if runs.is_dir() else [])]


def pull_requests(data_dir: Path, status: str = "active") -> list[int]:
    """PR ids with ``status`` in a portal data dir, read from its database (no portal needed)."""
    db = data_dir / "pull_requests.sqlite3"
    if not db.is_file():
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
        return [row[0] for row in con.execute("SELECT id FROM pull_requests WHERE status = ?", (status,))]


def eval_descriptions(promptfoo_dir: Path) -> list[str]:
    db = promptfoo_dir / "promptfoo.db"
    if not db.is_file():
        return []
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
            return [row[0] or "" for row in con.execute("SELECT description FROM evals ORDER BY created_at")]
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # Promptfoo is creating the database
            return []
        raise


def fixture_spokes(data_dir: Path) -> list[str]:
    """The fixture spokes still on main in a portal data dir, read from its database."""
    db = data_dir / "pull_requests.sqlite3"
    if not db.is_file():
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
        try:
            return [row[0] for row in con.execute("SELECT name FROM fixture_spokes WHERE removed_at IS NULL")]
        except sqlite3.OperationalError:  # an older database without fixtures
            return []
