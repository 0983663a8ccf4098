"""``agent-evals portal serve`` and ``agent-evals portal reset``.

``serve`` loads the settings, takes the data dir's lock (one portal per data dir),
creates or repairs the data dir, binds the socket itself (so ``--port 0`` knows its
port before building PR links) and runs uvicorn, which shuts down gracefully on
SIGINT/SIGTERM. The token comes only from ``PORTAL_TOKEN`` and is never logged.
It also mounts the agent chat endpoint (``POST /api/agents/{name}/chat``) and the stored
conversations (``agent_evals.authoring.live_routers``) unless given other routers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType

import uvicorn
from fastapi import APIRouter, FastAPI

from agent_evals.authoring import ProcessRef, default_data_dir, live_routers
from agent_evals.packs.spoke.portal.app import PortalConfig, create_app
from agent_evals.packs.spoke.portal.datadir import ensure_data_dir, hold_lock, reset_data_dir
from agent_evals.packs.spoke.portal.errors import DataDirError, GitError, SettingsError
from agent_evals.packs.spoke.portal.process import READY_MESSAGE
from agent_evals.packs.spoke.portal.serving import Serving, clear_serving, read_serving, sweep, watch_owner, write_serving
from agent_evals.packs.spoke.portal.settings import load_settings
from agent_evals.packs.spoke.portal.datadir import DB_FILE, is_portal_dir
from agent_evals.packs.spoke.portal.prstore import PullRequestStore

log = logging.getLogger(__name__)
EXIT_CONFIG = 2


class ListenError(RuntimeError):
    """The socket could not be bound (port in use, bad address, ...)."""


def warm_workers() -> None:
    """Called by the warm server after it imported this module (``System.server_modules``), before it
    forks the run's workers: the validators of the portal tools' output schemas, compiled once there
    instead of in every worker's first MCP session, and that of the spoke schema, which the
    ``spoke_json_valid`` check compiles at a worker's first row otherwise (it keeps one per schema: the
    portal's, as ``GET /api/schema`` serves it, is this one)."""
    from agent_evals.authoring import (  # lazy: only the warm server compiles them
        precompile_output_validators,
        schema_issues,
    )
    from agent_evals.packs.spoke.portal.schema import load_spoke_schema  # lazy: only the warm server reads it
    from agent_evals.packs.spoke.portal.tool_catalog import catalog  # lazy: only the warm server reads it

    precompile_output_validators((tool["name"], tool.get("output_schema")) for tool in catalog())
    schema_issues({}, {"schema": load_spoke_schema()})  # compiles and keeps the check's validator


def base_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP (not 0) matters: asyncio only sets TCP_NODELAY on sockets that say they are TCP, and
    # without it every response waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        # Listen now, not when uvicorn starts: with SO_REUSEADDR Linux lets a second socket bind a port
        # nobody listens on yet, so two portals racing for a stable port could both "bind" it, both say
        # they listen, and the loser's health check be answered by the winner.
        sock.listen(socket.SOMAXCONN)
    except OSError as exc:
        sock.close()
        raise ListenError(f"cannot listen on {base_url(host, port)}: {exc.strerror or exc}") from exc
    sock.set_inheritable(True)
    return sock


@contextlib.contextmanager
def _stop_quietly() -> Iterator[None]:
    """Make SIGINT/SIGTERM end ``serve`` with a return instead of a traceback or a signal exit.

    uvicorn shuts down gracefully on these signals, restores the previous handlers and
    re-raises the signal; with these handlers in place that re-raise only logs.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stopped(signum: int, _: FrameType | None) -> None:
        log.info("portal stopped (%s)", signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, stopped) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class PortalServer(uvicorn.Server):
    """uvicorn's server, which sees a stop (SIGTERM, SIGINT, the owner gone) at once: uvicorn's own
    looks for one every 0.1 s, and the end of every run waits for its portal to stop."""

    _loop: asyncio.AbstractEventLoop | None = None
    _stopping: asyncio.Event | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        self._wake()

    def stop(self) -> None:
        """Stop from another thread (the owner watcher's)."""
        self.should_exit = True
        self._wake()

    def _wake(self) -> None:
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)  # safe from a signal handler and a thread

    async def main_loop(self) -> None:  # uvicorn's, waking on a stop instead of sleeping 0.1 s
        self._loop, self._stopping = asyncio.get_running_loop(), asyncio.Event()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), 0.1)
            should_exit = await self.on_tick(counter)


def default_routers() -> list[APIRouter]:
    """The routers ``serve`` mounts by default: the agent chat endpoint and the stored conversations
    (read, rated, deleted), sharing one conversation store, opened on first use
    (``agent_evals.authoring.live_routers``; this pack named by name: importing it would be a cycle).
    """
    return live_routers("spoke")


def serve(
    host: str,
    port: int,
    data_dir: Path | None,
    settings_file: Path | None,
    public_url: str | None,
    *,
    extra_routers: Sequence[APIRouter] | None = None,
    owner_pid: int | None = None,
    sweep_eval_ids: Sequence[str] = (),
) -> int:
    """Serve the portal until SIGINT/SIGTERM; 0 on a clean stop, 2 on a configuration error.

    ``extra_routers`` None mounts :func:`default_routers`; pass ``()`` for none. With
    ``owner_pid``, the portal abandons the active PRs of ``sweep_eval_ids`` and stops once that
    process is gone (see :mod:`agent_evals.packs.spoke.portal.serving`).
    """
    if extra_routers is None:
        extra_routers = default_routers()
    data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
    token = os.environ.get("PORTAL_TOKEN") or None
    try:
        settings = load_settings(settings_file)
        with hold_lock(data_dir):
            ensure_data_dir(data_dir)
            sock = _bind(host, port)
            bound = base_url(host, sock.getsockname()[1])
            config = PortalConfig(
                data_dir=data_dir, public_url=public_url or bound, settings=settings, token=token, host=host
            )
            app = create_app(config, extra_routers=extra_routers)
            server = PortalServer(
                uvicorn.Config(app, log_config=None, lifespan="on", timeout_graceful_shutdown=5)
            )
            log.info(
                "data dir %s; settings %s; authentication %s; PR links %s",
                data_dir,
                settings_file or "(none)",
                "on (PORTAL_TOKEN)" if token else "off",
                config.public_url,
            )
            me = ProcessRef.current()
            write_serving(data_dir, Serving(config.public_url, me.pid, token is not None,
                                            str(settings_file) if settings_file else None, me.started, owner_pid))
            if owner_pid is not None:
                watch_owner(owner_pid, lambda: _owner_gone(app, server, sweep_eval_ids))
            log.info("%s %s (pid %d)", READY_MESSAGE, bound, os.getpid())
            try:
                with _stop_quietly():
                    server.run(sockets=[sock])
            finally:
                clear_serving(data_dir)
    except DataDirError as exc:
        log.error("cannot start the portal: %s%s", exc, _in_use_hint(data_dir))
        return EXIT_CONFIG
    except (SettingsError, GitError, ListenError, OSError) as exc:
        log.error("cannot start the portal: %s", exc)
        return EXIT_CONFIG
    return 0 if server.started else 1


def _in_use_hint(data_dir: Path) -> str:
    serving = read_serving(data_dir)
    if serving is None:
        return ""
    return f" (pid {serving.pid} serves it at {serving.url}; use that one: PORTAL_URL={serving.url})"


def _owner_gone(app: FastAPI, server: PortalServer, eval_ids: Sequence[str]) -> None:
    portal = app.state.portal

    def abandon_active(eval_id: str) -> int:
        portal.fixture_spokes.remove_all(eval_id=eval_id)  # and the spokes its cases put on main
        records = portal.list_pull_requests("active", eval_id, None).pull_requests
        for record in records:
            portal.abandon_pull_request(record.id)
        return len(records)

    swept = sweep(abandon_active, eval_ids)
    log.warning("abandoned %d active PR(s) of %s; stopping", swept, ", ".join(eval_ids) or "no run")
    server.stop()


def reset(data_dir: Path | None, *, force: bool = False) -> int:
    """Re-create the data dir from the seed. All pull requests are dropped: with active ones it
    lists them and needs ``force``."""
    target = Path(data_dir) if data_dir is not None else default_data_dir()
    try:
        active = _active_pull_requests(target)
        if active and not force:
            for line in active:
                print(f"  {line}")
            print(f"portal reset: {target} has {len(active)} active pull request(s) (above); "
                  "`npx agent-evals portal reset --force` drops them with everything else")
            return EXIT_CONFIG
        reset_data_dir(target)
    except (DataDirError, GitError) as exc:
        log.error("cannot reset the portal data: %s", exc)
        return EXIT_CONFIG
    log.info("reset %s from the seed", target.resolve())
    return 0


def _active_pull_requests(data_dir: Path) -> list[str]:
    """``#3 crm-dev-weu (eval run-…)`` for each active PR in an existing data dir."""
    if not is_portal_dir(data_dir):
        return []
    store = PullRequestStore(data_dir / DB_FILE)
    try:
        records = store.list(status="active")
    finally:
        store.close()
    return [f"#{r.id} {r.spoke_name} ({'eval ' + r.eval_id if r.eval_id else 'made by a person'})" for r in records]
