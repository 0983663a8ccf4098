"""Run a portal in a child process: for tests, benchmarks and the eval runner.

Standard library (plus ``agent_evals.authoring``'s light names) only, so the runner can import it without
FastAPI or MCP::

    with PortalProcess(data_dir=tmp / "portal", token=PortalProcess.new_token()) as portal:
        portal.url      # "http://127.0.0.1:54321"
        portal.token    # send as "Authorization: Bearer <token>"

``data_dir`` None means the default data dir (``agent_evals.authoring.default_data_dir()``).
The child is ``agent-evals portal serve --port 0`` on loopback, started with ``starter`` (a cold
interpreter by default; in a run, the run's warm launcher, which stands in for a portal forked from
the run's warm server: ``agent_evals.runner.warm_workers``), in a session of its own (so a terminal's
Ctrl-C reaches the runner, not the portal); it logs the URL it bound and its pid (``READY_MESSAGE``)
and the helper then waits for ``/api/health``. ``pid`` is the portal's own (the one its serving
file names); stopping goes through the started child, which passes the signal on. With ``owner_pid`` the
portal sweeps ``sweep_eval_ids`` and stops when the owner dies.
The token reaches the child only through its environment (``PORTAL_TOKEN``), never
its command line, and the child never logs it. Output goes to ``log_file``; by default to
``.<data dir name>.portal.log`` beside the data dir (beside its lock and serving file, never in
the temporary directory): a clean stop takes this start's lines out again, a portal that failed
leaves them there as evidence (the error names the file).
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Self

from agent_evals.authoring import COLD, KitStarter, default_data_dir, pause_point, start_detached

log = logging.getLogger(__name__)
READY_MESSAGE = "agent-evals portal listening on"
LOG_LIMIT_BYTES = 1 << 20
_LOG_PREFIX = re.compile(r"^(?:ERROR|CRITICAL|WARNING|INFO|DEBUG) [\w.]+: ")  # the CLI's log format
_READY = re.compile(re.escape(READY_MESSAGE) + r" (http://\S+)(?: \(pid (\d+)\))?")


class PortalStartError(RuntimeError):
    """The portal process exited or did not become healthy in time (message has the log tail)."""


class PortalProcess:
    def __init__(
        self,
        *,
        data_dir: Path | None = None,
        token: str | None = None,
        settings_file: Path | None = None,
        public_url: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        log_file: Path | None = None,
        startup_timeout: float = 30.0,
        extra_env: dict[str, str] | None = None,
        owner_pid: int | None = None,
        sweep_eval_ids: tuple[str, ...] = (),
        starter: KitStarter = COLD,
    ) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
        self.token = token
        self.settings_file = settings_file
        self.public_url = public_url
        self.host, self.port = host, port
        self.startup_timeout = startup_timeout
        self.extra_env = dict(extra_env or {})
        self.owner_pid = owner_pid
        self.sweep_eval_ids = tuple(sweep_eval_ids)
        self.starter = starter
        self._own_log = log_file is None  # this start's lines are taken out again after a clean stop
        self.log_file = Path(log_file) if log_file else default_log_file(self.data_dir)
        self.url = ""
        self.startup_seconds: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._portal_pid: int | None = None  # from its ready line (a warm start's child is its stand-in)
        self._log_start = 0

    @staticmethod
    def new_token() -> str:
        return secrets.token_urlsafe(32)

    @property
    def pid(self) -> int | None:
        """The portal's pid (the child's until the portal says its own)."""
        if self._proc is None:
            return None
        return self._portal_pid or self._proc.pid

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def command(self) -> list[str]:
        cmd = self.starter.command(
            "portal",
            "serve",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
        )
        if self.settings_file is not None:
            cmd += ["--settings", str(self.settings_file)]
        if self.public_url is not None:
            cmd += ["--public-url", self.public_url]
        if self.owner_pid is not None:
            cmd += ["--owner-pid", str(self.owner_pid)]
        for eval_id in self.sweep_eval_ids:
            cmd += ["--sweep-eval-id", eval_id]
        return cmd

    def _env(self) -> dict[str, str]:
        env = {**os.environ, **self.starter.env, **self.extra_env, "PYTHONUNBUFFERED": "1"}
        env.pop("PORTAL_TOKEN", None)
        if self.token:
            env["PORTAL_TOKEN"] = self.token
        return env

    def start(self) -> Self:
        """Start the child and wait until it is healthy; raise ``PortalStartError`` if it isn't."""
        if self._proc is not None:
            raise RuntimeError("this PortalProcess was already started")
        started = time.monotonic()
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        if self._own_log:
            _trim(self.log_file)
        try:  # whatever stops the start (a Ctrl-C included) stops the child too
            with open(self.log_file, "ab") as out:
                self._log_start = out.tell()  # a reused log file: only this run's lines count
                # Its own session from its first instruction: a terminal's Ctrl-C (sent to the whole
                # foreground group) must not stop the portal before the runner has cleaned up through it.
                self._proc = start_detached(
                    self.command(), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self._env()
                )
            pause_point("portal-starting")
            self.url = self._wait_for_url(started + self.startup_timeout)
            self._wait_for_health(started + self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        log.debug(
            "portal %s ready in %.2fs (pid %s, log %s)",
            self.url,
            self.startup_seconds,
            self.pid,
            self.log_file,
        )
        return self

    def _check_alive(self) -> None:
        assert self._proc is not None
        code = self._proc.poll()
        if code is not None:
            raise PortalStartError(
                f"the portal exited with code {code} during startup: {self._reason()}; "
                f"log {self.log_file}:\n{self.log_tail()}"
            )

    def _reason(self) -> str:
        """Why the portal would not start, in its own words: its last error line."""
        try:
            lines = [line.strip() for line in self._run_log().splitlines() if line.strip()]
        except OSError:
            return "no log"
        errors = [line for line in lines if line.startswith(("ERROR", "CRITICAL"))]
        last = (errors or lines or ["it wrote nothing"])[-1]
        return _LOG_PREFIX.sub("", last)

    def _wait_for_url(self, deadline: float) -> str:
        while time.monotonic() < deadline:
            self._check_alive()
            match = _READY.search(self._run_log())
            if match:
                self._portal_pid = int(match.group(2)) if match.group(2) else None
                return match.group(1)
            time.sleep(0.02)
        raise PortalStartError(
            f"the portal did not report its URL within {self.startup_timeout:.0f}s; "
            f"log {self.log_file}:\n{self.log_tail()}"
        )

    def _wait_for_health(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                with urllib.request.urlopen(f"{self.url}/api/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.02)
        raise PortalStartError(
            f"{self.url}/api/health did not answer within {self.startup_timeout:.0f}s; "
            f"log {self.log_file}:\n{self.log_tail()}"
        )

    def stop(self, timeout: float = 10.0) -> int | None:
        """Stop gracefully (SIGTERM), then kill after ``timeout``; return the exit code."""
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                log.warning("portal pid %s ignored SIGTERM for %.0fs; killing it", proc.pid, timeout)
                proc.kill()
                proc.wait()
        if self._own_log and proc.returncode in (0, -signal.SIGTERM, 128 + signal.SIGTERM):  # stopped, not crashed
            self._take_back_log()
        return proc.returncode

    def _take_back_log(self) -> None:
        """Remove this start's lines from the log (the file too, when nothing else is in it)."""
        try:
            if self._log_start == 0:
                self.log_file.unlink(missing_ok=True)
            else:
                os.truncate(self.log_file, self._log_start)
        except OSError as exc:
            log.debug("could not trim %s: %s", self.log_file, exc)

    def detach(self) -> None:
        """Let the portal run on without this helper (``stop`` then does nothing); with
        ``owner_pid`` it stops by itself once the owner is gone."""
        self._proc, self._portal_pid = None, None
        self._own_log = False

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self._run_log()
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def _run_log(self) -> str:
        """This run's part of the log file."""
        with open(self.log_file, "rb") as log_file:
            log_file.seek(self._log_start)
            return log_file.read().decode("utf-8", errors="replace")

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def default_log_file(data_dir: Path) -> Path:
    """``.<data dir name>.portal.log`` beside the data dir."""
    data_dir = Path(data_dir).expanduser().resolve()
    return data_dir.with_name(f".{data_dir.name}.portal.log")


def _trim(path: Path) -> None:
    """Start a log left by portals that failed (or were left to run on) afresh once it is large."""
    try:
        if path.stat().st_size > LOG_LIMIT_BYTES:
            path.unlink()
    except OSError:
        pass
