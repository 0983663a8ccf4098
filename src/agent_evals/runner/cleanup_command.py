"""``agent-evals cleanup`` (``npm run cleanup``): undo what eval runs left behind, through the system
of every pack in reach (the built-in ones and those the suites name: :mod:`agent_evals.system`).

Each system covers the places its runs used (the portal: every data dir the kit's suites use,
their shards' and those of runs that died, through the portal serving each or one started for the
purpose; or ``--portal-url`` / ``PORTAL_URL``, or ``--data-dir``) and marks the runs that died as
swept. What people made is never touched, nor is what runs still going made (their manifest
unfinished, their runner alive: ``sweep.live_runs``); they clean up after themselves. The temporary
directories of runs that are over go too (``sweep.sweep_leftovers``, as at a run's start).
:func:`sweep_dead_runs` is the sweep alone, for ``agent-evals merge``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from agent_evals.packs import built_in, load_pack
from agent_evals.record import KitError
from agent_evals.suites.manifest import runs_dir
from agent_evals.suites.discovery import discover
from agent_evals.runner.sweep import live_runs, run_of, sweep_leftovers
from agent_evals.system import System

log = logging.getLogger(__name__)


def cleanup_command(portal_url: str | None, data_dir: Path | None, eval_id: str | None) -> int:
    if eval_id is not None and run_of(eval_id) in (going := live_runs(runs_dir())):
        print(f"cleanup: {run_of(eval_id)} is still running (pid {going[run_of(eval_id)]}): its pull requests are "
              "left to it (it cleans up when it ends, Ctrl-C included)")
        return 1
    alive = set(live_runs(runs_dir()))  # asked now: a run that ends meanwhile is swept by the next cleanup or run
    sweep_leftovers(runs_dir())  # the temporary directories of runs that are over (a kill -9 leaves its own)
    worst = 0
    for system in systems_in_reach():
        code = system.clean(url=portal_url, data_dir=data_dir, eval_id=eval_id, alive=alive)
        worst = max(worst, code or 0)
    return worst


def sweep_dead_runs() -> list[str]:
    """Undo what runs which died (a killed shard, say) left where they ran: what each system did, one line
    per place."""
    done: list[str] = []
    for system in systems_in_reach():
        done += system.sweep_dead_runs(runs_dir())
    return done


def systems_in_reach() -> list[System]:
    """One of each kind of system: the built-in packs', then those the suites' packs bring."""
    from agent_evals.runner.systems import suite_pack  # lazy: keeps agent_evals.runner.cleanup_command's start-up as small as it is

    found: dict[type[System], System] = {type(p.system): p.system for p in built_in().values()}
    for suite in discover():
        try:
            system = load_pack(suite_pack(suite)).system
        except KitError as exc:
            log.debug("cleanup: suite %s: %s", suite.name, exc)
            continue
        found.setdefault(type(system), system)
    return [system for kind, system in found.items() if kind is not System]
