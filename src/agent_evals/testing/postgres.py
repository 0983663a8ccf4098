"""A throwaway PostgreSQL server in a folder, for tests and benchmarks (standard library only)::

    with PostgresServer(tmp_path / "pg") as server:
        url = server.create_database("chat")   # postgresql://postgres@/chat?host=/tmp/agent-evals-pg-…

It runs Debian's PostgreSQL binaries (``/usr/lib/postgresql/<version>/bin``, or ``PG_BIN``):
``initdb`` with trust authentication, then ``postgres`` as a child process of this one, on a
Unix socket only (no TCP port, so the servers of parallel test sessions never meet), in a short
folder of its own under ``/tmp`` (a socket's path is limited to 107 bytes), removed by ``close``. ``stop`` sends it SIGINT (PostgreSQL's fast shutdown) and waits for it; ``start`` again
keeps the data (a store that goes down and comes back).

PostgreSQL refuses to run as root: as root, ``initdb`` and ``postgres`` run as the ``postgres``
user, and the folders above the server's folder are given search permission for others just
before they start (the server then works in its data dir and needs them no more; pytest may
take the permission back when another session starts). Clients (``createdb``, the tests) run
as the caller. Modes changed are given back by :meth:`close`.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self

PG_BIN_ENV = "PG_BIN"
START_TIMEOUT_S = 60.0
START_ATTEMPTS = 3


def find_bin() -> Path | None:
    """The folder of ``initdb`` and ``postgres``: ``PG_BIN``, else the newest Debian version, else PATH."""
    if os.environ.get(PG_BIN_ENV):
        return Path(os.environ[PG_BIN_ENV])
    versions = [p for p in Path("/usr/lib/postgresql").glob("*/bin/initdb") if p.parts[-3].isdigit()]
    if versions:
        return max(versions, key=lambda p: int(p.parts[-3])).parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


class PostgresError(RuntimeError):
    pass


class PostgresServer:
    def __init__(self, root: Path, *, bin_dir: Path | None = None, run_as: str = "postgres") -> None:
        self.root = Path(root).resolve()
        found = bin_dir or find_bin()
        if found is None:
            raise PostgresError("no PostgreSQL binaries found (set PG_BIN to the folder of initdb and postgres)")
        self.bin_dir: Path = found
        self.data = self.root / "data"
        # A short folder of its own: a socket's path has at most 107 bytes, too few under a deep temporary
        # folder (a test's). Made at start, removed by close().
        self.socket_dir = Path("/tmp") / f"agent-evals-pg-{os.getpid()}-{secrets.token_hex(4)}"
        self.log_file = self.root / "postgres.log"
        self.as_root = os.geteuid() == 0
        self._account = pwd.getpwnam(run_as) if self.as_root else None
        self._modes: dict[Path, int] = {}
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> Self:
        """Start the server (``initdb`` first when the folder has none). As root, a start that failed
        because another pytest session took the folders' permission back meanwhile is tried again."""
        for attempt in range(1, START_ATTEMPTS + 1):
            try:
                return self._start()
            except PostgresError:
                if attempt == START_ATTEMPTS or not self._parents_closed():
                    raise
        raise AssertionError("unreachable")

    def _parents_closed(self) -> bool:
        return self._account is not None and any(
            not stat.S_IMODE(parent.stat().st_mode) & stat.S_IXOTH for parent in self.root.parents
        )

    def _start(self) -> Self:
        if self.running:
            return self
        initialized = self.root / "initdb.done"
        if not initialized.exists():
            shutil.rmtree(self.data, ignore_errors=True)  # a half-made one
            self._prepare()
            self._run_as_server(self._bin("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                                "-E", "UTF8", "--no-sync")
            initialized.touch()
        self._open_parents()
        self._socket_folder()
        with self.log_file.open("ab") as log:
            self._process = subprocess.Popen(
                [self._bin("postgres"), "-D", str(self.data), "-k", str(self.socket_dir), "-c", "listen_addresses=",
                 "-F", "-c", "max_connections=50"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                **self._as_server(),
            )
        self._wait_ready()
        return self

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGINT)  # fast shutdown: active sessions are ended
        try:
            process.wait(START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def close(self) -> None:
        """Stop the server and give the folders above it their modes back."""
        try:
            self.stop()
        finally:
            for path, mode in self._modes.items():
                path.chmod(mode)
            self._modes.clear()
            shutil.rmtree(self.socket_dir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    # -- databases -------------------------------------------------------------------------------
    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.socket_dir}"

    def create_database(self, name: str) -> str:
        self._run(self._bin("createdb"), "-h", str(self.socket_dir), "-U", "postgres", name)
        return self.url(name)

    # -- helpers -------------------------------------------------------------------------------
    def _bin(self, program: str) -> str:
        return str(self.bin_dir / program)

    def _as_server(self) -> dict[str, Any]:
        if self._account is None:
            return {}
        return {"user": self._account.pw_uid, "group": self._account.pw_gid, "extra_groups": [],
                "env": {**os.environ, "HOME": self._account.pw_dir, "USER": self._account.pw_name}}

    def _prepare(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        if self._account is not None:
            os.chown(self.root, self._account.pw_uid, self._account.pw_gid)

    def _socket_folder(self) -> None:
        self.socket_dir.mkdir(mode=0o755, exist_ok=True)
        if self._account is not None:
            os.chown(self.socket_dir, self._account.pw_uid, self._account.pw_gid)

    def _open_parents(self) -> None:
        """Search permission for others on the folders above, for the server user to reach its folder."""
        if self._account is None:
            return
        for parent in self.root.parents:
            mode = stat.S_IMODE(parent.stat().st_mode)
            if not mode & stat.S_IXOTH:
                self._modes.setdefault(parent, mode)
                parent.chmod(mode | stat.S_IXOTH)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if not self.running:
                raise PostgresError(f"postgres exited during startup:\n{self._log_tail()}")
            ready = subprocess.run([self._bin("pg_isready"), "-q", "-h", str(self.socket_dir), "-U", "postgres"],
                                   stdin=subprocess.DEVNULL, capture_output=True, check=False)
            if ready.returncode == 0:
                return
            time.sleep(0.05)
        self.stop()
        raise PostgresError(f"postgres was not ready within {START_TIMEOUT_S:.0f}s:\n{self._log_tail()}")

    def _run_as_server(self, *command: str) -> None:
        self._open_parents()
        self._check(subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False,
                                   timeout=START_TIMEOUT_S, **self._as_server()), command[0])

    def _run(self, *command: str) -> None:
        self._check(subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False,
                                   timeout=START_TIMEOUT_S), command[0])

    def _check(self, done: subprocess.CompletedProcess[str], program: str) -> None:
        if done.returncode != 0:
            said = done.stderr.strip() or done.stdout.strip()
            raise PostgresError(f"{Path(program).name} failed ({done.returncode}): {said}\n{self._log_tail()}")

    def _log_tail(self) -> str:
        return self.log_file.read_text(errors="replace")[-2000:] if self.log_file.exists() else ""
