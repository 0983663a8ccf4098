"""``agent-evals cleanup`` (``npm run cleanup``): abandon every active PR eval runs left behind.

Without options it covers every data dir the kit's suites use (the default one and each
suite with customer settings), through the portal already serving it (``npm run portal``)
or one started for the purpose; it also marks the runs that died as swept. With
``--portal-url`` (or ``PORTAL_URL``) it cleans that portal only; with ``--data-dir``, that
data dir. PRs people made (no eval id) are never touched.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent_evals.cleanup import CleanupReport, cleanup_all_eval_prs, cleanup_run
from agent_evals.portal_api import PortalAPI
from agent_evals.runner.manifest import runs_dir
from agent_evals.runner.portals import PortalSetupError, _shared, data_dir_of
from agent_evals.runner.suites import Suite, discover
from agent_evals.runner.sweep import stale_runs, sweep_stale

log = logging.getLogger(__name__)


def cleanup_command(portal_url: str | None, data_dir: Path | None, eval_id: str | None) -> int:
    url = portal_url or (None if data_dir else os.environ.get("PORTAL_URL"))
    if url:
        return _report(url, _clean(PortalAPI(url, token=os.environ.get("PORTAL_TOKEN")), eval_id))
    targets = _targets(data_dir)
    worst = 0
    for folder, suite in targets:
        if not (folder / "portal.json").is_file():
            continue  # never used: nothing to clean
        try:
            with _portal(folder, suite) as api:
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


def _targets(data_dir: Path | None) -> list[tuple[Path, Suite | None]]:
    if data_dir is not None:
        return [(Path(data_dir).resolve(), None)]
    seen: dict[Path, Suite] = {}
    for suite in discover():
        seen.setdefault(data_dir_of(suite).resolve(), suite)
    return list(seen.items())


@contextmanager
def _portal(folder: Path, suite: Suite | None) -> Iterator[PortalAPI]:
    if suite is not None:
        shared = _shared(suite, folder)
        if shared is not None:
            yield PortalAPI(shared.url, token=shared.token)
            return
    from agent_evals.portal.process import PortalProcess, PortalStartError

    settings = suite.portal_settings if suite is not None else None
    try:
        with PortalProcess(data_dir=folder, token=PortalProcess.new_token(), settings_file=settings) as portal:
            yield PortalAPI(portal.url, token=portal.token)
    except PortalStartError as exc:
        raise PortalSetupError(str(exc).splitlines()[0]) from None


def _clean(api: PortalAPI, eval_id: str | None) -> CleanupReport:
    return cleanup_run(eval_id, api) if eval_id else cleanup_all_eval_prs(api)


def _report(where: str, report: CleanupReport, note: str = "") -> int:
    print(f"cleanup {where}: {report.summary()}{note}")
    return 1 if report.failed or report.error else 0
