"""Which results a report covers: ``latest``, an eval id, a run id or a ``-o`` JSON file.

- ``latest`` (the default): the newest eval in the results database, or, when the kit's
  run manifest lists it, every eval of that run (a run of ``all`` is one eval per suite);
- ``eval-…``: that eval; ``run-…``: every eval of that ``agent-evals run``;
- a path (``*.json``): a Promptfoo ``-o`` file.

The run manifests (``data/runs/<run id>/run.json``, beside the portal data dirs) add to each
eval its suite, mode, git revision, selected cases, repeat and whether it was interrupted.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agent_evals.paths import promptfoo_config_dir
from agent_evals.report.errors import ReportInputError
from agent_evals.report.model import EvalInfo, RunInfo
from agent_evals.report.promptfoo_db import DB_NAME, connect, list_evals, read_eval
from agent_evals.report.promptfoo_json import read_results_file, report_format
from agent_evals.report.rows import Row
from agent_evals.suites.manifest import RunManifest, SuiteRun, load_manifests, runs_dir
from agent_evals.suites.shard_spec import parse_shard

LATEST = "latest"


@dataclass(frozen=True)
class Loaded:
    evals: tuple[EvalInfo, ...]
    runs: tuple[RunInfo, ...]
    rows: tuple[Row, ...]


def load_results(specs: Sequence[str], config_dir: Path | None = None) -> Loaded:
    """The evals, runs and rows ``specs`` name (``[]`` = ``latest``), each eval once."""
    folder = config_dir or promptfoo_config_dir()
    manifests = load_manifests(runs_dir())
    evals: dict[str, tuple[EvalInfo, list[Row]]] = {}
    runs: dict[str, RunInfo] = {}
    db_ids: dict[Path, list[str]] = {}
    for spec in specs or [LATEST]:
        if _is_file(spec):
            if report_format(Path(spec)):
                raise ReportInputError(
                    f"{spec}: an agent-evals report, not Promptfoo results (use it as --baseline)"
                )
            info, rows = read_results_file(Path(spec))
            evals.setdefault(info.eval_id, (info, rows))
            continue
        ids, run = _expand(spec, folder, manifests)
        if run is not None:
            runs[run.run_id] = _run_info(run)
        for eid in ids:
            wanted = db_ids.setdefault(_db_folder(run, eid, folder), [])
            if eid not in wanted:
                wanted.append(eid)
    for db_folder, ids in db_ids.items():
        evals.update(_read_db(db_folder / DB_NAME, [eid for eid in ids if eid not in evals]))
    by_eval = {s.eval_id: (m, s) for m in manifests for s in m.suites if s.eval_id}
    infos = [_with_manifest(info, rows, by_eval.get(info.eval_id)) for info, rows in evals.values()]
    every_row = tuple(row for _, eval_rows in evals.values() for row in eval_rows)
    return Loaded(tuple(infos), tuple(runs.values()), every_row)


def load_run(manifest: RunManifest, config_dir: Path | None = None) -> Loaded:
    """The evals of one ``agent-evals run`` (from its manifest, saved or not)."""
    folder = config_dir or promptfoo_config_dir()
    evals: dict[str, tuple[EvalInfo, list[Row]]] = {}
    for db_folder in dict.fromkeys(_db_folder(manifest, s.eval_id, folder) for s in manifest.suites if s.eval_id):
        ids = [s.eval_id for s in manifest.suites if s.eval_id and _db_folder(manifest, s.eval_id, folder) == db_folder]
        evals.update(_read_db(db_folder / DB_NAME, ids))
    by_eval = {s.eval_id: (manifest, s) for s in manifest.suites if s.eval_id}
    infos = [_with_manifest(info, rows, by_eval.get(info.eval_id)) for info, rows in evals.values()]
    rows = tuple(row for _, eval_rows in evals.values() for row in eval_rows)
    return Loaded(tuple(infos), (_run_info(manifest),), rows)


def _db_folder(run: RunManifest | None, eval_id: str, default: Path) -> Path:
    """Where an eval is stored: a shard's in its run's folder, any other in the viewer's database."""
    for suite in run.suites if run is not None else ():
        if suite.eval_id == eval_id and suite.promptfoo_dir:
            return Path(suite.promptfoo_dir)
    return default


def _is_file(spec: str) -> bool:
    return spec.endswith(".json") or os.sep in spec or Path(spec).is_file()


def _expand(spec: str, folder: Path, manifests: list[RunManifest]) -> tuple[list[str], RunManifest | None]:
    """The eval ids ``spec`` names, and the run when it names a whole run."""
    if spec.startswith("run-"):
        run = next((m for m in manifests if m.run_id == spec), None)
        if run is None:
            raise ReportInputError(f"no run {spec} in {runs_dir()}")
        return [s.eval_id for s in run.suites if s.eval_id], run
    if spec != LATEST:
        return [spec], None
    with connect(folder / DB_NAME) as con:
        stored = list_evals(con)
    if not stored:
        raise ReportInputError(f"the results database {folder / DB_NAME} holds no eval yet")
    newest = stored[0].eval_id
    run = next((m for m in reversed(manifests) if any(s.eval_id == newest for s in m.suites)), None)
    if run is None:
        return [newest], None
    return [s.eval_id for s in run.suites if s.eval_id], run


def _read_db(db: Path, eval_ids: list[str]) -> dict[str, tuple[EvalInfo, list[Row]]]:
    with connect(db) as con:
        stored = {item.eval_id: item for item in list_evals(con)}
        unknown = [eid for eid in eval_ids if eid not in stored]
        if unknown:
            newest = next(iter(stored), None)
            hint = f"; the newest is {newest}" if newest else "; it holds no eval"
            raise ReportInputError(f"no eval {', '.join(unknown)} in {db} ({len(stored)} evals{hint})")
        return {eid: read_eval(con, stored[eid]) for eid in eval_ids}


def _with_manifest(info: EvalInfo, rows: list[Row], found: tuple[RunManifest, SuiteRun] | None) -> EvalInfo:
    if found is None:
        if info.mode is not None:  # from a shard stamp
            return info
        replayed = {row.replayed for row in rows}
        mode = None if len(replayed) != 1 else ("replay" if replayed == {True} else "live")
        return replace(info, mode=mode)
    run, suite = found
    shard = parse_shard(suite.shard) if suite.shard else None
    if shard is not None:
        info = replace(info, shards=(shard.index,), shard_count=shard.total)
    return replace(
        info,
        suite=suite.suite,
        run_id=run.run_id,
        mode=run.mode,
        git_revision=run.git_revision,
        interrupted=suite.interrupted or run.interrupted,
        selected=tuple(suite.selected) if suite.selected is not None else None,
        repeat=suite.repeat,
        providers=suite.providers,
        budget=suite.budget,
        until_decided=suite.until_decided or info.until_decided,
        attempt=suite.attempt,
    )


def _run_info(run: RunManifest) -> RunInfo:
    finished = run.finished_at is not None
    return RunInfo(
        run_id=run.run_id,
        mode=run.mode,
        git_revision=run.git_revision,
        finished=finished,
        interrupted=run.interrupted,
        alive=not finished and run.runner_alive(),
        suites_not_run=tuple(s.suite for s in run.suites if not s.eval_id),
        budget=run.budget,
    )
