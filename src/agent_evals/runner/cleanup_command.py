"""``agent-evals cleanup`` (``npm run cleanup``): abandon every active PR eval runs left behind.

Without options it covers every data dir the kit's suites use (the default one and each
suite with customer settings), through the portal already serving it (``npm run portal``)
or one started for the purpose; it also marks the runs that died as swept. With
``--portal-url`` (or ``PORTAL_URL``) it cleans that portal only; with ``--data-dir``, that
data dir. PRs people made (no eval id) are never touched, nor are those of runs still going
(their manifest unfinished, their runner alive: ``sweep.live_runs``); they clean up after
themselves. The data dirs of shards
(``portal.shard-2-of-4``, ``agent-evals run --shard``) are covered too, and so is any data dir
a run that died names in its manifest. :func:`sweep_dead_runs` is the sweep alone, for
``agent-evals merge``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent_evals.cleanup import CleanupReport, cleanup_all_eval_prs, cleanup_run
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.runner.manifest import runs_dir
from agent_evals.runner.portals import PortalSetupError, _shared, data_dir_of
from agent_evals.runner.suites import Suite, discover
from agent_evals.runner.sweep import live_runs, run_of, stale_data_dirs, stale_runs, sweep_stale

log = logging.getLogger(__name__)


def cleanup_command(portal_url: str | None, data_dir: Path | None, eval_id: str | None) -> int:
    if eval_id is not None and run_of(eval_id) in (going := live_runs(runs_dir())):
        print(f"cleanup: {run_of(eval_id)} is still running (pid {going[run_of(eval_id)]}): its pull requests are "
              "left to it (it cleans up when it ends, Ctrl-C included)")
        return 1
    url = portal_url or (None if data_dir else os.environ.get("PORTAL_URL"))
    if url:
        return _report(url, _clean(PortalAPI(url, token=os.environ.get("PORTAL_TOKEN")), eval_id))
    targets = _targets(data_dir)
    worst = 0
    for folder, suite in targets:
        if not (folder / "portal.json").is_file():
            continue  # never used: nothing to clean
        try:
            with portal_on(folder, suite) as api:
                stale = len(stale_runs(runs_dir(), data_dir=folder))
                report = _clean(api, eval_id)
                sweep_stale(runs_dir(), folder, api)  # marks the dead runs swept here
        except PortalSetupError as exc:
            print(f"cleanup {folder}: [portal] {exc}")
            worst = 1
            continue
        note = f"; {stale} run(s) that died were among them" if stale else ""
        worst = max(worst, _report(str(folder), report, note))
    return worst


def sweep_dead_runs() -> list[tuple[Path, int, int]]:
    """Abandon the PRs that runs which died (a killed shard, say) left in the data dirs they used,
    through the portal serving each one or one started for it: ``[(data dir, runs, PRs)]``."""
    done = []
    for folder in stale_data_dirs(runs_dir()):
        if not (folder / "portal.json").is_file():
            continue
        try:
            with portal_on(folder, suite_of_data_dir(folder)) as api:
                runs, prs = sweep_stale(runs_dir(), folder, api)
        except PortalSetupError as exc:
            log.warning("sweep of %s: %s", folder, exc)
            continue
        done.append((folder, runs, prs))
    return done


def suite_of_data_dir(folder: Path) -> Suite | None:
    """The suite whose portal serves ``folder`` (its own data dir, or one of its shards')."""
    name = Path(folder).name
    for suite in discover():
        own = data_dir_of(suite).name
        if name == own or name.startswith(f"{own}.shard-"):
            return suite
    return None


def _targets(data_dir: Path | None) -> list[tuple[Path, Suite | None]]:
    if data_dir is not None:
        return [(Path(data_dir).resolve(), None)]
    seen: dict[Path, Suite | None] = {}
    for suite in discover():
        own = data_dir_of(suite).resolve()
        seen.setdefault(own, suite)
        for shard_dir in sorted(own.parent.glob(f"{own.name}.shard-*-of-*")):
            seen.setdefault(shard_dir.resolve(), suite)
    for folder in stale_data_dirs(runs_dir()):
        seen.setdefault(folder.resolve(), suite_of_data_dir(folder))
    return list(seen.items())


@contextmanager
def portal_on(folder: Path, suite: Suite | None) -> Iterator[PortalAPI]:
    """A client of the portal serving ``folder``, or of one started on it for the purpose."""
    if suite is not None:
        shared = _shared(suite, folder)
        if shared is not None:
            yield PortalAPI(shared.url, token=shared.token)
            return
    from agent_evals.packs.spoke.portal.process import PortalProcess, PortalStartError

    settings = suite.portal_settings if suite is not None else None
    try:
        with PortalProcess(data_dir=folder, token=PortalProcess.new_token(), settings_file=settings) as portal:
            yield PortalAPI(portal.url, token=portal.token)
    except PortalStartError as exc:
        raise PortalSetupError(str(exc).splitlines()[0]) from None


def _clean(api: PortalAPI, eval_id: str | None) -> CleanupReport:
    if eval_id:
        return cleanup_run(eval_id, api)
    going = live_runs(runs_dir())  # asked now: a run that ends meanwhile is swept by the next cleanup or run
    return cleanup_all_eval_prs(api, alive=lambda eval_id: run_of(eval_id) in going)


def _report(where: str, report: CleanupReport, note: str = "") -> int:
    print(f"cleanup {where}: {report.summary()}{note}")
    return 1 if report.failed or report.error else 0
