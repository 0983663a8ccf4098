"""The portal a suite runs against: an external one (``PORTAL_URL``), the one already serving
the suite's data dir (``npm run portal``), or one the runner starts and stops.

Each suite's data dir has a stable port (8400 for the default data dir, 8401… for the
suites with customer settings, in suite order), used when free, so the PR links in results
keep working with ``agent-evals portal serve --suite <suite>`` after the run. Within one run
(``all``), a portal the runner started serves every later suite with the same data dir and
settings (:class:`PortalPool`): one start instead of one per suite.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import threading
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from agent_evals.paths import default_data_dir
from agent_evals.record import KitError
from agent_evals.runner.interrupts import ForcedExit
from agent_evals.runner.manifest import suite_eval_id
from agent_evals.runner.suites import Suite, discover, select

log = logging.getLogger(__name__)
DEFAULT_PORT = 8400
IN_USE = "is in use by another running portal"  # the portal's words when the data dir's lock is held


class PortalSetupError(KitError):
    """No portal can be had for a suite; the message says what to do (kind ``portal``)."""

    kind = "portal"


@dataclass(frozen=True)
class Portal:
    url: str
    token: str | None
    data_dir: Path | None  # None for an external portal
    started: bool  # started (and stopped) by this runner
    log_file: Path | None = None
    pid: int | None = None


def data_dir_of(suite: Suite) -> Path:
    """The suite's portal data dir: the default one, or ``portal-<suite>`` beside it for a suite
    with customer settings."""
    base = default_data_dir()
    return base if suite.portal_settings is None else base.with_name(f"portal-{suite.name}")


def stable_port(suite: Suite) -> int:
    """8400 for the default data dir; 8401, 8402… for suites with settings, in suite order."""
    if suite.portal_settings is None:
        return DEFAULT_PORT
    with_settings = [s.name for s in discover() if s.portal_settings is not None]
    return DEFAULT_PORT + 1 + (with_settings.index(suite.name) if suite.name in with_settings else len(with_settings))


def suite_portal_settings(
    name: str, data_dir: Path | None, settings: Path | None, port: int | None
) -> tuple[Path, Path | None, int]:
    """``portal serve --suite``: the data dir, settings and port that suite's runs use."""
    (suite,) = select(name)
    return (data_dir or data_dir_of(suite), settings or suite.portal_settings, stable_port(suite) if port is None else port)


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@contextmanager
def portal_for(
    suite: Suite, *, run_id: str, log_folder: Path, data_dir: Path | None = None, port: int | None = None,
    sweep_ids: tuple[str, ...] = (),
) -> Iterator[Portal]:
    """The portal for one suite's run (see the module docstring); raises PortalSetupError.
    ``data_dir`` and ``port`` replace the suite's own (a shard's: ``agent_evals.runner.sharding``);
    a portal it starts abandons the PRs of ``run_id`` and of ``sweep_ids`` if the runner dies."""
    url = os.environ.get("PORTAL_URL", "").strip()
    if url:
        if suite.portal_settings:
            log.warning("PORTAL_URL is set: suite %s expects a portal with %s", suite.name, suite.portal_settings)
        yield Portal(url.rstrip("/"), os.environ.get("PORTAL_TOKEN") or None, None, False)
        return
    data_dir = data_dir or data_dir_of(suite)
    shared = _shared(suite, data_dir)
    if shared is not None:
        print(f"portal: using the portal already serving {data_dir}: {shared.url} (pid {shared.pid})", flush=True)
        yield shared
        return
    from agent_evals.packs.spoke.portal.process import PortalProcess, PortalStartError

    port = stable_port(suite) if port is None else port
    log_file = log_folder / f"portal-{suite.name}.log"

    def new_process(port: int) -> PortalProcess:
        return PortalProcess(
            data_dir=data_dir, token=secrets.token_urlsafe(32), settings_file=suite.portal_settings,
            port=port, log_file=log_file, owner_pid=os.getpid(),
            sweep_eval_ids=(run_id, suite_eval_id(run_id, suite.name), *sweep_ids),
        )

    process = new_process(port if port and _free(port) else 0)
    try:
        try:
            process.start()
        except PortalStartError:
            if process.port in (0, None):
                raise
            process = new_process(0)  # the stable port was taken meanwhile: any free one will do
            process.start()
    except PortalStartError as exc:
        raise PortalSetupError(_start_failure(suite, data_dir, exc)) from None
    try:
        print(f"portal: {process.url} (data: {data_dir})", flush=True)
        yield Portal(process.url, process.token, data_dir, True, log_file, process.pid)
    except ForcedExit:
        process.detach()  # it sees the runner gone, abandons the run's PRs and stops by itself
        raise
    finally:
        process.stop()


def _start_failure(suite: Suite, data_dir: Path, exc: Exception) -> str:
    """One line on why the suite's portal did not start, in the terms of what to do next."""
    first = str(exc).splitlines()[0]
    if IN_USE in first:  # a portal that was still starting when this run looked (another run's, say)
        return (f"the portal for {suite.name} did not start: its data dir {data_dir} is in use by another portal "
                "(another run, or `npm run portal` started meanwhile): wait for it to end, or give this run a "
                f"data dir of its own (AGENT_EVALS_DATA_DIR); the portal's log: {first.rsplit('; log ', 1)[-1].rstrip(':')}")
    return f"the portal for {suite.name} did not start: {first}"


def _shared(suite: Suite, data_dir: Path) -> Portal | None:
    from agent_evals.packs.spoke.portal.serving import read_serving

    serving = read_serving(data_dir)
    if serving is None:
        return None
    expected = str(suite.portal_settings) if suite.portal_settings else None
    if (serving.settings_file or None) != expected and not _same_file(serving.settings_file, expected):
        raise PortalSetupError(
            f"the portal serving {data_dir} (pid {serving.pid}, {serving.url}) runs with settings "
            f"{serving.settings_file or 'none'}, but suite {suite.name} needs {expected or 'none'}; stop it, or "
            f"start it with `npm run portal -- --suite {suite.name}`"
        )
    token = os.environ.get("PORTAL_TOKEN") or None
    if serving.owner_pid is not None and serving.owner_pid != os.getpid() and token is None:
        raise PortalSetupError(
            f"the data dir {data_dir} is in use by the portal of another run (pid {serving.pid}, started by pid "
            f"{serving.owner_pid}): wait for that run to end, or give this run a data dir of its own "
            "(AGENT_EVALS_DATA_DIR)"
        )
    if serving.token_required and token is None:
        raise PortalSetupError(
            f"the portal serving {data_dir} ({serving.url}) needs a token: set PORTAL_TOKEN to the one it was started with"
        )
    return Portal(serving.url, token, data_dir, False, None, serving.pid)


def _same_file(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and Path(a).resolve() == Path(b).resolve()


class PortalPool:
    """The portals of one run, each started once and shared by the suites that need it (the same
    data dir, hence the same settings); all stop when the pool closes (a forced exit detaches them)."""

    def __init__(self, run_id: str, log_folder: Path, suites: Iterable[Suite] = ()) -> None:
        self.run_id, self.log_folder = run_id, log_folder
        self._sweep_ids = tuple(suite_eval_id(run_id, item.name) for item in suites)  # every suite may share it
        self._stack = ExitStack()
        self._open: dict[Path, Portal] = {}
        self._by_suite: dict[str, Portal] = {}
        self._lock = threading.Lock()  # suites that run at once ask for the same portal

    def __enter__(self) -> PortalPool:
        return self

    def __exit__(self, *exc: object) -> bool | None:
        return self._stack.__exit__(*exc)  # type: ignore[arg-type]

    def begin_stop(self) -> None:
        """Ask every portal this runner started to stop (the suites are done), so they stop side by
        side; closing the pool waits for each."""
        with self._lock:
            started = [portal for portal in self._open.values() if portal.started and portal.pid]
        for portal in started:
            try:
                os.kill(portal.pid, signal.SIGTERM)  # type: ignore[arg-type]
            except ProcessLookupError:
                pass

    def opened(self, suite: str) -> Portal | None:
        """The portal a suite (by name) got from the pool, or None: nothing is started."""
        with self._lock:
            return self._by_suite.get(suite)

    def get(self, suite: Suite, *, data_dir: Path | None = None, port: int | None = None) -> Portal:
        """The portal of the suite's data dir (``data_dir`` and ``port``: a shard's, see ``portal_for``)."""
        own = (data_dir or data_dir_of(suite)).resolve()
        key = own if not os.environ.get("PORTAL_URL", "").strip() else Path("<external>")
        with self._lock:
            portal = self._open.get(key)
            if portal is None:
                portal = self._stack.enter_context(portal_for(
                    suite, run_id=self.run_id, log_folder=self.log_folder, data_dir=data_dir, port=port,
                    sweep_ids=self._sweep_ids,
                ))
                self._open[key] = portal
                self._by_suite[suite.name] = portal
                return portal
            self._by_suite[suite.name] = portal
        if portal.data_dir is not None:
            print(f"portal: {portal.url} (data: {portal.data_dir})", flush=True)
        return portal
