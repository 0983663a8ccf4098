"""Runs that died (their process is gone, their manifest never finished) and their pull requests.

Every run keeps a manifest under ``data/runs/<run id>/run.json`` (``agent_evals.runner.manifest``).
The next run, and ``agent-evals cleanup``, abandon the active PRs of stale runs in each data
dir they reach, and mark the manifest swept there; once every data dir of a stale run was
swept, it is marked finished (interrupted).
"""

from __future__ import annotations

from pathlib import Path

from agent_evals.cleanup import cleanup_run
from agent_evals.portal.serving import pid_alive
from agent_evals.portal_api import PortalAPI
from agent_evals.runner.manifest import RunManifest, load_manifests, now, suite_eval_id


def stale_runs(runs_root: Path, *, data_dir: Path) -> list[RunManifest]:
    """Dead, unfinished runs that used ``data_dir`` and were not swept there yet."""
    target = str(Path(data_dir).resolve())
    out = []
    for manifest in load_manifests(runs_root):
        if manifest.finished_at is not None or pid_alive(manifest.pid):
            continue
        dirs = {s.data_dir for s in manifest.suites if s.data_dir}
        if target in dirs and target not in manifest.swept:
            out.append(manifest)
    return out


def live_runs(runs_root: Path) -> dict[str, int]:
    """The runs still going: ``{run id: runner pid}`` of every unfinished manifest whose runner is alive."""
    return {m.run_id: m.pid for m in load_manifests(runs_root) if m.finished_at is None and pid_alive(m.pid)}


def run_of(eval_id: str) -> str:
    """The run an eval id belongs to: ``run-1a2b`` of ``run-1a2b.tickets-create`` (a suite's) or of itself."""
    return eval_id.split(".", 1)[0]


def stale_data_dirs(runs_root: Path) -> list[Path]:
    """Every data dir a dead, unfinished run used and was not swept in yet (e.g. a killed shard's)."""
    found: dict[str, None] = {}
    for manifest in load_manifests(runs_root):
        if manifest.finished_at is None and not pid_alive(manifest.pid):
            for suite in manifest.suites:
                if suite.data_dir and suite.data_dir not in manifest.swept:
                    found.setdefault(suite.data_dir)
    return [Path(folder) for folder in found]


def sweep_stale(runs_root: Path, data_dir: Path, api: PortalAPI) -> tuple[int, int]:
    """Abandon the active PRs of the stale runs of ``data_dir``; returns (runs, PRs)."""
    runs = prs = 0
    for manifest in stale_runs(runs_root, data_dir=data_dir):
        report = cleanup_run(manifest.run_id, api)  # a run from before the suites had ids of their own
        for entry in manifest.suites:
            more = cleanup_run(suite_eval_id(manifest.run_id, entry.suite), api)
            report.abandoned += more.abandoned
            report.error = report.error or more.error
        if report.error:
            continue  # the portal could not be asked; a later run tries again
        runs += 1
        prs += len(report.abandoned)
        manifest.swept.append(str(Path(data_dir).resolve()))
        if {s.data_dir for s in manifest.suites if s.data_dir} <= set(manifest.swept):
            manifest.finished_at = now()
            manifest.interrupted = True
        manifest.save(runs_root / manifest.run_id)
    return runs, prs
