"""Which portal serves a data dir, and a portal that does not outlive its owner.

``serve`` writes ``<parent>/.<data dir name>.serving.json`` (beside the data dir's lock)
with its URL, pid and the pid's start time (a reused pid is not taken for the portal), whether it
needs a token, its settings file and the run that owns it, if any; it removes it when it
stops. ``agent-evals run`` and ``cleanup`` read it to use a portal that already serves the
data dir (``npm run portal``) instead of starting one. The token is never written.

With ``--owner-pid``, the portal watches its owner (the runner that started it): when the
owner is gone (killed, even with SIGKILL) it abandons the active pull requests of the
``--sweep-eval-id`` runs, then stops. So no PR of a run outlives both the run and its portal.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_evals.authoring import ProcessRef, pid_alive

log = logging.getLogger(__name__)
OWNER_POLL_S = 0.5


@dataclass(frozen=True)
class Serving:
    url: str
    pid: int
    token_required: bool
    settings_file: str | None
    started: str | None = None  # the process's start time: a pid reused since is not this portal
    owner_pid: int | None = None  # the run (runner, or Promptfoo) that started it and that it serves

    @property
    def process(self) -> ProcessRef:
        return ProcessRef(self.pid, self.started)


def serving_file(data_dir: Path) -> Path:
    data_dir = Path(data_dir).expanduser().resolve()
    return data_dir.with_name(f".{data_dir.name}.serving.json")


def write_serving(data_dir: Path, serving: Serving) -> Path:
    path = serving_file(data_dir)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(serving.__dict__) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def clear_serving(data_dir: Path) -> None:
    """Remove the serving file if it is this process's."""
    current = read_serving(data_dir, alive_only=False)
    if current is not None and current.pid == os.getpid():
        serving_file(data_dir).unlink(missing_ok=True)


def read_serving(data_dir: Path, *, alive_only: bool = True) -> Serving | None:
    """The portal serving ``data_dir``, or None (no file, unreadable, or its process is gone, even if
    its pid now belongs to another process)."""
    try:
        raw = json.loads(serving_file(data_dir).read_text(encoding="utf-8"))
        owner = raw.get("owner_pid")
        serving = Serving(str(raw["url"]), int(raw["pid"]), bool(raw["token_required"]), raw.get("settings_file"),
                          str(raw["started"]) if raw.get("started") else None, int(owner) if owner else None)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if alive_only and not serving.process.alive():
        return None
    return serving


def watch_owner(owner_pid: int, on_gone: Callable[[], None], *, poll_s: float = OWNER_POLL_S) -> threading.Thread:
    """Call ``on_gone`` (in a daemon thread) once ``owner_pid`` has exited."""

    def watch() -> None:
        while pid_alive(owner_pid):
            time.sleep(poll_s)
        log.warning("the portal's owner (pid %d) is gone", owner_pid)
        on_gone()

    thread = threading.Thread(target=watch, name="owner-watch", daemon=True)
    thread.start()
    return thread


def sweep(abandon_active: Callable[[str], int], eval_ids: Sequence[str]) -> int:
    """Abandon the active PRs of ``eval_ids``; returns how many (errors are logged, not raised)."""
    total = 0
    for eval_id in eval_ids:
        try:
            total += abandon_active(eval_id)
        except Exception as exc:  # noqa: BLE001 - a last-resort sweep must not die half-way
            log.error("could not sweep the PRs of %s: %s", eval_id, exc)
    return total
