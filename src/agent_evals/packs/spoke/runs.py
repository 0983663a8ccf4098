"""The portal a suite runs against (the spoke system's run scope): an external one (``PORTAL_URL``),
the one already serving the suite's data dir (``npm run portal``), or one the runner starts and stops.

Each suite's data dir has a stable port (8400 for the default data dir, 8401… for the
suites with customer settings, in suite order), used when free, so the PR links in results
keep working with ``agent-evals portal serve --suite <suite>`` after the run. Within one run
(``all``), a portal the runner started serves every later suite with the same data dir and
settings (:class:`PortalPool`): one start instead of one per suite. A shard of a sharded run
(``--shard I/N``) gets a data dir of its own (``data/portal.shard-2-of-4``) on the suite's stable
port + 100 × I when free, so that shards can run at once on one machine.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from agent_evals.authoring import (
    COLD,
    CleanupReport,
    ForcedExit,
    KitStarter,
    Running,
    Shard,
    Suite,
    SystemPool,
    SystemSetupError,
    default_data_dir,
    discover_suites,
    pid_alive,
    select_suites,
    suite_eval_id,
)
from agent_evals.packs.spoke.portal.api import PortalAPI, PortalError
from agent_evals.packs.spoke.portal.process import PortalProcess, PortalStartError
from agent_evals.packs.spoke.portal.serving import read_serving
from agent_evals.packs.spoke.undo import cleanup_run, cleanup_test

log = logging.getLogger(__name__)
DEFAULT_PORT = 8400
PORT_STEP = 100  # a shard's port: the suite's stable port + 100 × its index
MAX_PORT = 65000
IN_USE = "is in use by another running portal"  # the portal's words when the data dir's lock is held
SETTINGS_NAME = "portal-settings.yaml"  # a suite's customer settings for its portal, beside its promptfooconfig.yaml


def portal_settings(suite: Suite) -> Path | None:
    """The suite's portal settings file (``portal-settings.yaml`` in its folder), or None."""
    path = suite.folder / SETTINGS_NAME
    return path if path.is_file() else None


@dataclass
class RunningPortal(Running):
    """A portal a suite runs against (``data_dir`` None: an external one; ``started``: by this runner,
    which stops it). ``suite`` is the suite it serves, whose settings a new portal on its data dir needs."""

    token: str | None = field(default=None, repr=False)
    suite: Suite | None = None

    @property
    def api(self) -> Any:
        return PortalAPI(self.url or "", token=self.token)

    def env(self) -> dict[str, str]:
        return {"PORTAL_URL": self.url or "", **({"PORTAL_TOKEN": self.token} if self.token else {})}

    def env_keys(self) -> tuple[str, ...]:
        return ("PORTAL_URL", "PORTAL_TOKEN")

    def undo_eval(self, eval_id: str) -> CleanupReport:
        return cleanup_run(eval_id, self.api)

    def undo_row(self, result: Mapping[str, Any]) -> CleanupReport:
        return cleanup_test(result, self.api)

    def active(self, eval_id: str) -> list[str]:
        try:
            found = PortalAPI(self.url or "", token=self.token, timeout=2.0).list_pull_requests(
                status="active", eval_id=eval_id)
        except PortalError:
            return []
        return [f"#{pr['id']}" for pr in found]

    def alive(self) -> bool:
        return not (self.started and self.pid is not None and not pid_alive(self.pid))

    def reopen(self) -> AbstractContextManager[Running]:
        assert self.data_dir is not None
        return portal_on(self.data_dir, self.suite)


def from_env(env: Mapping[str, str]) -> RunningPortal | None:
    """The portal ``PORTAL_URL`` (with ``PORTAL_TOKEN``) names, or None."""
    url = env.get("PORTAL_URL", "").strip()
    return RunningPortal(url=url.rstrip("/"), token=env.get("PORTAL_TOKEN") or None) if url else None


def shard_data_dir(suite: Suite, shard: Shard) -> Path:
    base = data_dir_of(suite)
    return base.with_name(f"{base.name}.{shard.name}")


def shard_port(suite: Suite, shard: Shard) -> int:
    port = stable_port(suite) + PORT_STEP * shard.index
    return port if DEFAULT_PORT < port <= MAX_PORT else 0


def data_dir_of(suite: Suite) -> Path:
    """The suite's portal data dir: the default one, or ``portal-<suite>`` beside it for a suite
    with customer settings."""
    base = default_data_dir()
    return base if portal_settings(suite) is None else base.with_name(f"portal-{suite.name}")


def stable_port(suite: Suite) -> int:
    """8400 for the default data dir; 8401, 8402… for suites with settings, in suite order."""
    if portal_settings(suite) is None:
        return DEFAULT_PORT
    with_settings = [s.name for s in discover_suites() if portal_settings(s) is not None]
    return DEFAULT_PORT + 1 + (with_settings.index(suite.name) if suite.name in with_settings else len(with_settings))


def suite_portal_settings(
    name: str, data_dir: Path | None, settings: Path | None, port: int | None
) -> tuple[Path, Path | None, int]:
    """``portal serve --suite``: the data dir, settings and port that suite's runs use."""
    (suite,) = select_suites(name)
    return (data_dir or data_dir_of(suite), settings or portal_settings(suite), stable_port(suite) if port is None else port)


def _free(port: int) -> bool:
    """Whether a portal could listen on ``port`` now: bound as the portal binds (``SO_REUSEADDR``), so the
    connections of a portal that just stopped (``TIME_WAIT``) do not keep the next run off its port."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen()
        except OSError:
            return False
    return True


def _start_preferring(port: int | None, new_process: Callable[[int], PortalProcess]) -> PortalProcess:
    """A portal started on ``port`` when it is free, else on any free port: also when another portal took
    it between the look and the start (two runs at once), which its start then fails on."""
    process = new_process(port if port and _free(port) else 0)
    try:
        return process.start()
    except PortalStartError:
        if process.port in (0, None):
            raise
    return new_process(0).start()


@contextmanager
def portal_for(
    suite: Suite, *, run_id: str, log_folder: Path, data_dir: Path | None = None, port: int | None = None,
    sweep_ids: tuple[str, ...] = (), starter: KitStarter = COLD,
) -> Iterator[RunningPortal]:
    """The portal for one suite's run (see the module docstring); raises SystemSetupError.
    ``data_dir`` and ``port`` replace the suite's own (a shard's: ``agent_evals.runner.sharding``);
    a portal it starts (with ``starter``) abandons the PRs of ``run_id`` and of ``sweep_ids`` if the runner dies."""
    url = os.environ.get("PORTAL_URL", "").strip()
    if url:
        if portal_settings(suite):
            log.warning("PORTAL_URL is set: suite %s expects a portal with %s", suite.name, portal_settings(suite))
        yield RunningPortal(url=url.rstrip("/"), token=os.environ.get("PORTAL_TOKEN") or None, suite=suite)
        return
    data_dir = data_dir or data_dir_of(suite)
    shared = _shared(suite, data_dir)
    if shared is not None:
        print(f"portal: using the portal already serving {data_dir}: {shared.url} (pid {shared.pid})", flush=True)
        yield shared
        return

    port = stable_port(suite) if port is None else port
    log_file = log_folder / f"portal-{suite.name}.log"

    def new_process(port: int) -> PortalProcess:
        return PortalProcess(
            data_dir=data_dir, token=secrets.token_urlsafe(32), settings_file=portal_settings(suite),
            port=port, log_file=log_file, owner_pid=os.getpid(),
            sweep_eval_ids=(run_id, suite_eval_id(run_id, suite.name), *sweep_ids), starter=starter,
        )

    try:
        process = _start_preferring(port, new_process)
    except PortalStartError as exc:
        raise SystemSetupError(_start_failure(suite, data_dir, exc)) from None
    try:
        print(f"portal: {process.url} (data: {data_dir})", flush=True)
        yield RunningPortal(data_dir=data_dir, url=process.url, started=True, pid=process.pid, log_file=log_file,
                     token=process.token, suite=suite)
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


def _shared(suite: Suite, data_dir: Path) -> RunningPortal | None:
    serving = read_serving(data_dir)
    if serving is None:
        return None
    expected = str(portal_settings(suite)) if portal_settings(suite) else None
    if (serving.settings_file or None) != expected and not _same_file(serving.settings_file, expected):
        raise SystemSetupError(
            f"the portal serving {data_dir} (pid {serving.pid}, {serving.url}) runs with settings "
            f"{serving.settings_file or 'none'}, but suite {suite.name} needs {expected or 'none'}; stop it, or "
            f"start it with `npm run portal -- --suite {suite.name}`"
        )
    token = os.environ.get("PORTAL_TOKEN") or None
    if serving.owner_pid is not None and serving.owner_pid != os.getpid() and token is None:
        raise SystemSetupError(
            f"the data dir {data_dir} is in use by the portal of another run (pid {serving.pid}, started by pid "
            f"{serving.owner_pid}): wait for that run to end, or give this run a data dir of its own "
            "(AGENT_EVALS_DATA_DIR)"
        )
    if serving.token_required and token is None:
        raise SystemSetupError(
            f"the portal serving {data_dir} ({serving.url}) needs a token: set PORTAL_TOKEN to the one it was started with"
        )
    return RunningPortal(data_dir=data_dir, url=serving.url, pid=serving.pid, token=token, suite=suite)


def _same_file(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and Path(a).resolve() == Path(b).resolve()


class PortalPool(SystemPool):
    """The portals of one run, each started once and shared by the suites that need it (the same
    data dir, hence the same settings); all stop when the pool closes (a forced exit detaches them)."""

    def __init__(self, run_id: str, log_folder: Path, suites: Iterable[Suite] = (), *, starter: KitStarter = COLD) -> None:
        self.run_id, self.log_folder, self.starter = run_id, log_folder, starter
        self._sweep_ids = tuple(suite_eval_id(run_id, item.name) for item in suites)  # every suite may share it
        self._stack = ExitStack()
        self._open: dict[Path, RunningPortal] = {}
        self._by_suite: dict[str, RunningPortal] = {}
        self._lock = threading.Lock()  # suites that run at once ask for the same portal

    def __enter__(self) -> PortalPool:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return self._stack.__exit__(exc_type, exc, tb)

    def begin_stop(self) -> None:
        """Ask every portal this runner started to stop (the suites are done), so they stop side by
        side; closing the pool waits for each."""
        with self._lock:
            started = [pid for portal in self._open.values() if portal.started and (pid := portal.pid)]
        for pid in started:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def opened(self, suite: str) -> RunningPortal | None:
        """The portal a suite (by name) got from the pool, or None: nothing is started."""
        with self._lock:
            return self._by_suite.get(suite)

    def get(self, suite: Suite, *, shard: Shard | None = None) -> RunningPortal:
        """The portal of the suite's data dir (a shard's own: see the module docstring)."""
        data_dir, port = (shard_data_dir(suite, shard), shard_port(suite, shard)) if shard is not None else (None, None)
        own = (data_dir or data_dir_of(suite)).resolve()
        key = own if not os.environ.get("PORTAL_URL", "").strip() else Path("<external>")
        with self._lock:
            portal = self._open.get(key)
            if portal is None:
                portal = self._stack.enter_context(portal_for(
                    suite, run_id=self.run_id, log_folder=self.log_folder, data_dir=data_dir, port=port,
                    sweep_ids=self._sweep_ids, starter=self.starter,
                ))
                self._open[key] = portal
                self._by_suite[suite.name] = portal
                return portal
            self._by_suite[suite.name] = portal
        if portal.data_dir is not None:
            print(f"portal: {portal.url} (data: {portal.data_dir})", flush=True)
        return portal


@contextmanager
def portal_on(folder: Path, suite: Suite | None) -> Iterator[RunningPortal]:
    """The portal serving ``folder``, or one started on it for the purpose (and stopped after)."""
    if suite is not None:
        shared = _shared(suite, folder)
        if shared is not None:
            yield shared
            return

    settings = portal_settings(suite) if suite is not None else None
    try:
        with PortalProcess(data_dir=folder, token=PortalProcess.new_token(), settings_file=settings) as portal:
            yield RunningPortal(data_dir=folder, url=portal.url, started=True, pid=portal.pid, token=portal.token,
                         suite=suite)
    except PortalStartError as exc:
        raise SystemSetupError(str(exc).splitlines()[0]) from None


def start_plain(suite: Suite, owner_pid: int, run_id: str) -> dict[str, Any]:
    """A plain ``promptfoo eval``'s portal (``agent_evals.runner.plain``): the one serving the suite's data
    dir, or a new one on the stable port with a fresh token, owned by the Promptfoo process (it abandons
    the run's PRs and stops when Promptfoo exits, Ctrl-C included). With ``PORTAL_URL`` set, that portal."""
    external = from_env(os.environ)
    if external is not None:
        return {"started": None, "env": external.env(), "where": f"portal {external.url}"}
    shared = _shared(suite, data_dir_of(suite))
    if shared is not None:
        return {"started": None, "env": shared.env(), "where": f"portal {shared.url}"}
    def new_process(port: int) -> PortalProcess:
        return PortalProcess(
            data_dir=data_dir_of(suite), token=secrets.token_urlsafe(32), settings_file=portal_settings(suite),
            port=port, owner_pid=owner_pid, sweep_eval_ids=(run_id,),
        )

    try:
        process = _start_preferring(stable_port(suite), new_process)
    except PortalStartError as exc:
        raise SystemSetupError(f"the portal for {suite.name} did not start: {str(exc).splitlines()[0]}") from None
    portal = RunningPortal(url=process.url, token=process.token)
    return {"started": process.pid, "env": portal.env(), "where": f"portal {process.url} (started for this run)"}
