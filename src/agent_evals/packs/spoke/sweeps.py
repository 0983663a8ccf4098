"""``agent-evals cleanup`` on the portal (the spoke system's ``clean``), and the sweep of runs that died.

Without options it covers every data dir the kit's suites use (the default one and each
suite with customer settings), through the portal already serving it (``npm run portal``)
or one started for the purpose; it also marks the runs that died as swept. With
``--portal-url`` (or ``PORTAL_URL``) it cleans that portal only; with ``--data-dir``, that
data dir. PRs people made (no eval id) are never touched, nor are those of runs still going
(their manifest unfinished, their runner alive: ``runner.sweep.live_runs``); they clean up after
themselves. The data dirs of shards (``portal.shard-2-of-4``, ``agent-evals run --shard``) are
covered too, and so is any data dir a run that died names in its manifest.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from agent_evals.packs.spoke.runs import RunningPortal, data_dir_of, portal_on
from agent_evals.packs.spoke.undo import cleanup_all_eval_prs, cleanup_run
from agent_evals.authoring import (
    CleanupReport,
    Suite,
    SystemSetupError,
    discover_suites,
    run_of,
    stale_data_dirs,
    stale_runs,
    sweep_stale,
)

log = logging.getLogger(__name__)


def clean(runs_root: Path, *, url: str | None, data_dir: Path | None, eval_id: str | None, alive: set[str]) -> int | None:
    """The cleanup of every place this system's runs used (see the module docstring); None: none was used."""
    url = url or (None if data_dir else os.environ.get("PORTAL_URL"))
    if url:
        portal = RunningPortal(url=url, token=os.environ.get("PORTAL_TOKEN"))
        return _report(url, _clean(portal, eval_id, alive))
    worst: int | None = None
    for folder, suite in _targets(runs_root, data_dir):
        if not (folder / "portal.json").is_file():
            continue  # never used: nothing to clean
        try:
            with portal_on(folder, suite) as portal:
                stale = len(stale_runs(runs_root, data_dir=folder))
                report = _clean(portal, eval_id, alive)
                sweep_stale(runs_root, portal)  # marks the dead runs swept here
        except SystemSetupError as exc:
            print(f"cleanup {folder}: [{exc.kind}] {exc}")
            worst = 1
            continue
        note = f"; {stale} run(s) that died were among them" if stale else ""
        worst = max(worst or 0, _report(str(folder), report, note))
    return worst


def sweep_dead_runs(runs_root: Path) -> list[str]:
    """Abandon the PRs that runs which died (a killed shard, say) left in the data dirs they used,
    through the portal serving each one or one started for it; one line per data dir swept."""
    done = []
    for folder in stale_data_dirs(runs_root):
        if not (folder / "portal.json").is_file():
            continue
        try:
            with portal_on(folder, suite_of_data_dir(folder)) as portal:
                runs, report = sweep_stale(runs_root, portal)
        except SystemSetupError as exc:
            log.warning("sweep of %s: %s", folder, exc)
            continue
        if runs:
            done.append(f"swept {len(report.undone)} pull request(s) left active in {folder} by {runs} run(s) that died")
    return done


def suite_of_data_dir(folder: Path) -> Suite | None:
    """The suite whose portal serves ``folder`` (its own data dir, or one of its shards')."""
    name = Path(folder).name
    for suite in discover_suites():
        own = data_dir_of(suite).name
        if name == own or name.startswith(f"{own}.shard-"):
            return suite
    return None


def _targets(runs_root: Path, data_dir: Path | None) -> list[tuple[Path, Suite | None]]:
    if data_dir is not None:
        return [(Path(data_dir).resolve(), None)]
    seen: dict[Path, Suite | None] = {}
    for suite in discover_suites():
        own = data_dir_of(suite).resolve()
        seen.setdefault(own, suite)
        for shard_dir in sorted(own.parent.glob(f"{own.name}.shard-*-of-*")):
            seen.setdefault(shard_dir.resolve(), suite)
    for folder in stale_data_dirs(runs_root):
        seen.setdefault(folder.resolve(), suite_of_data_dir(folder))
    return list(seen.items())


def _clean(portal: RunningPortal, eval_id: str | None, alive: set[str]) -> CleanupReport:
    if eval_id:
        return cleanup_run(eval_id, portal.api)
    return cleanup_all_eval_prs(portal.api, alive=lambda eval_id: run_of(eval_id) in alive)


def _report(where: str, report: CleanupReport, note: str = "") -> int:
    print(f"cleanup {where}: {report.summary()}{note}")
    return 1 if report.failed or report.error else 0
