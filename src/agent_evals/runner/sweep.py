"""Runs that died (their process is gone, their manifest never finished) and their side effects.

Every run keeps a manifest under ``data/runs/<run id>/run.json`` (``agent_evals.suites.manifest``).
A run's side effects live where its suites ran: the system's data dir, or an external system the
runner knows only by its URL (:class:`agent_evals.system.Running`). The next run, and ``agent-evals
cleanup``, undo what stale runs left in each place they reach (through the system's ``undo_eval``), and
mark the manifest swept there; once every place of a stale run was swept, it is marked finished
(interrupted). A run that finished but could not clean up after itself (its portal died and no
other could be started) lists the places in ``unclean``: they are swept the same way.
:func:`sweep_leftovers` removes what runs that are over left on disk: their temporary
directories and config copies.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from agent_evals.paths import evals_dir
from agent_evals.suites.manifest import RunManifest, load_manifests, now, suite_eval_id, temp_dir
from agent_evals.runner.trace_port import stale_copies
from agent_evals.system import CleanupReport, Running


def place(data_dir: Path | None, url: str | None = None) -> str:
    """Where a suite's PRs live, as manifests record it: the data dir, else ``portal <url>``."""
    if data_dir is not None:
        return str(Path(data_dir).resolve())
    return f"portal {(url or '').rstrip('/')}"


def _places(manifest: RunManifest) -> set[str]:
    return {p for s in manifest.suites if (p := s.place)}


def _pending(manifest: RunManifest) -> set[str]:
    """The places of a run that still need a sweep: every place of a dead run, the unclean ones of
    a run that is over; none of a run still going."""
    if manifest.finished_at is None:
        return set() if manifest.runner_alive() else _places(manifest) - set(manifest.swept)
    return set(manifest.unclean) - set(manifest.swept)


def stale_runs(runs_root: Path, *, data_dir: Path | None = None, url: str | None = None) -> list[RunManifest]:
    """Runs that died (or could not clean up) with PRs in ``data_dir`` (or the portal at ``url``)
    not swept there yet."""
    target = place(data_dir, url)
    return [manifest for manifest in load_manifests(runs_root) if target in _pending(manifest)]


def live_runs(runs_root: Path) -> dict[str, int]:
    """The runs still going: ``{run id: runner pid}`` of every unfinished manifest whose runner is alive."""
    return {m.run_id: m.pid for m in load_manifests(runs_root) if m.finished_at is None and m.runner_alive()}


def run_of(eval_id: str) -> str:
    """The run an eval id belongs to: ``run-1a2b`` of ``run-1a2b.tickets-create`` (a suite's) or of itself."""
    return eval_id.split(".", 1)[0]


def stale_data_dirs(runs_root: Path) -> list[Path]:
    """Every data dir a run that died (or could not clean up) used and was not swept in yet."""
    found: dict[str, None] = {}
    for manifest in load_manifests(runs_root):
        for item in sorted(_pending(manifest)):
            if not item.startswith("portal "):
                found.setdefault(item)
    return [Path(folder) for folder in found]


def sweep_stale(runs_root: Path, running: Running) -> tuple[int, CleanupReport]:
    """Undo what the stale runs left in the place of ``running`` (its data dir, else its URL);
    returns the runs swept and what their undo did, all together."""
    data_dir, url = running.data_dir, running.url
    target = place(data_dir, url)
    runs, total = 0, CleanupReport()
    for manifest in stale_runs(runs_root, data_dir=data_dir, url=url):
        report = running.undo_eval(manifest.run_id)  # a run from before the suites had ids of their own
        for entry in manifest.suites:
            more = running.undo_eval(suite_eval_id(manifest.run_id, entry.suite))
            report.add(more)
        if report.error:
            continue  # the system could not be asked; a later run tries again
        runs += 1
        total.add(report)
        manifest.swept.append(target)
        if manifest.finished_at is None and _places(manifest) <= set(manifest.swept):
            manifest.finished_at = now()
            manifest.interrupted = True
        manifest.save(runs_root / manifest.run_id)
    return runs, total


def sweep_leftovers(runs_root: Path) -> None:
    """What runs that are over (finished, or dead) left on disk: their temporary directories (a
    ``kill -9`` of a whole run leaves Promptfoo's request files and the warm launcher there) and
    the copies of suite configs with a trace receiver port of their own."""
    for manifest in load_manifests(runs_root):
        folder = temp_dir(runs_root / manifest.run_id)
        if (manifest.finished_at is not None or not manifest.runner_alive()) and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
    for copy in stale_copies(evals_dir()):
        copy.unlink(missing_ok=True)
