"""``agent-evals run … --rerun-invalid N``: run a suite's invalid rows again, up to N times.

A row is invalid when the simulated user spoiled its conversation (:mod:`agent_evals.user_checks`):
it is neither a pass nor a fail, so it says nothing about the agent. After a suite ran, its
invalid rows (read from the eval Promptfoo stored) run again, and again while some stay
invalid, at most N more times. Each attempt is a Promptfoo eval of its own, holding only those
rows — ``--filter-pattern`` of their exact descriptions and ``--repeat`` as many as a case had
invalid rows (one eval per count) — with each ``-o`` file named for it (``x.json`` →
``x.attempt-2.json``) and a description that says so. The run manifest lists each attempt
(``attempt``, ``rerun_of``), and the report lets a re-run row take the place of the invalid
one: every attempt is kept. A row invalid on every attempt stays invalid (counted once).

The suite's exit status is then the final state's: 0 when every run passed after the re-runs,
else 100 (Promptfoo's own rule); anything else Promptfoo answered (1, 2, an interrupt) stays.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agent_evals.paths import promptfoo_config_dir
from agent_evals.shards.selection import REPLACED, description_pattern, rewrite_flags
from agent_evals.suites.discovery import Suite
from agent_evals.suites.manifest import RunManifest, SuiteRun
from agent_evals.suites.shard_spec import tagged_path
from agent_evals.runner.describe import eval_description
from agent_evals.suites.promptfoo_args import read_flags

if TYPE_CHECKING:
    from agent_evals.report.model import EvalInfo, RunInfo
    from agent_evals.report.rows import Row
    from agent_evals.report.sources import Loaded

log = logging.getLogger(__name__)

RunAgain = Callable[[SuiteRun, list[str]], int]  # (the attempt's manifest entry, promptfoo args) -> exit status
DROPPED = (*REPLACED, "--repeat", "--description", "--filter-failing", "--filter-failing-only",
           "--filter-errors-only", "--filter-sample")
MAX_RERUNS = 10


def rerun_invalid(
    times: int, suite: Suite, first: SuiteRun, manifest: RunManifest, folder: Path, promptfoo_args: Sequence[str],
    description: str, again: RunAgain, *, stopped: Callable[[], bool] = lambda: False, config_dir: Path | None = None,
) -> int | None:
    """Re-run the invalid rows of ``first`` (already run) up to ``times`` times; the suite's exit
    status after them, or None when nothing was re-run."""
    evals = [first]
    ran_again = False
    for attempt in range(2, times + 2):
        if stopped() or any(e.exit_code not in (0, 100) for e in evals):
            break
        invalid = _invalid_rows([e.eval_id for e in evals if e.eval_id], config_dir)
        if not invalid:
            break
        evals = []
        for count, descriptions in _by_count(invalid).items():
            ids = [case for description, case in descriptions]
            print(f"{suite.name}: re-running {len(ids) * count} invalid row(s) (attempt {attempt} of at "
                  f"most {times + 1}): {', '.join(ids)}", flush=True)
            entry = SuiteRun(suite.name, selected=ids, repeat=count, providers=first.providers, attempt=attempt,
                             rerun_of=first.eval_id if attempt == 2 else None)
            manifest.suites.append(entry)
            manifest.save(folder)
            args = rerun_args(promptfoo_args, [d for d, _ in descriptions], count, attempt,
                              f"{description} · re-run of invalid rows, attempt {attempt}")
            entry.exit_code = again(entry, args)
            evals.append(entry)
            ran_again = True
            if stopped():
                break
    if not ran_again:
        return None
    return final_code(manifest, suite.name, config_dir)


def rerun_args(args: Sequence[str], descriptions: Sequence[str], repeat: int, attempt: int, description: str) -> list[str]:
    """``args`` without the user's filters, repeat and description, each ``-o`` file named for the
    attempt, then the attempt's own filter, repeat and description."""
    out = rewrite_flags(args, DROPPED, lambda values: [attempt_path(v, attempt) for v in values])
    return [*out, "--filter-pattern", description_pattern(descriptions), "--repeat", str(repeat),
            "--description", description]


def attempt_path(path: str, attempt: int) -> str:
    """``results/x.json`` → ``results/x.attempt-2.json`` (the suffix kept; none: appended)."""
    return tagged_path(path, f"attempt-{attempt}")


def _invalid_rows(eval_ids: Sequence[str], config_dir: Path | None) -> list[tuple[str, str]]:
    """``(description, case id)`` of each invalid row of these evals (a case with two: twice)."""
    from agent_evals.report.promptfoo_db import DB_NAME, connect, list_evals, read_eval  # lazy: not at run start

    with connect((config_dir or promptfoo_config_dir()) / DB_NAME) as con:
        stored = {item.eval_id: item for item in list_evals(con)}
        rows = [row for eid in eval_ids if eid in stored for row in read_eval(con, stored[eid])[1]]
    return [(row.description, row.case_id) for row in rows if row.outcome == "invalid"]


def _by_count(invalid: list[tuple[str, str]]) -> dict[int, list[tuple[str, str]]]:
    """The invalid rows' descriptions grouped by how many rows of each are invalid (one eval each)."""
    counts = Counter(invalid)
    groups: dict[int, list[tuple[str, str]]] = {}
    for item, count in counts.items():
        groups.setdefault(count, []).append(item)
    return dict(sorted(groups.items()))


def final_code(manifest: RunManifest, suite: str, config_dir: Path | None = None) -> int:
    """0 when every run of the suite (re-runs in their invalid rows' place) passed, else 100."""
    from agent_evals.report.build import build_report  # lazy: read after a pass, not at run start
    from agent_evals.report.sources import load_run  # lazy: read after a pass, not at run start

    report = build_report(*_loaded(load_run(manifest, config_dir), suite))
    t = report.totals
    return 0 if t.runs and t.passed == t.runs else 100


def _loaded(loaded: Loaded, suite: str) -> tuple[list[EvalInfo], list[RunInfo], list[Row]]:
    evals = [e for e in loaded.evals if e.suite == suite]
    ids = {e.eval_id for e in evals}
    return evals, [], [r for r in loaded.rows if r.eval_id in ids]


def rerun_problem(times: int, shard: str | None) -> str | None:
    """One line when ``--rerun-invalid`` cannot be used as given, else None."""
    if not 0 <= times <= MAX_RERUNS:
        return f"--rerun-invalid takes a number of re-runs from 0 to {MAX_RERUNS}, got {times}"
    if times and shard is not None:
        return ("--rerun-invalid cannot be combined with --shard (a shard's eval is merged later): re-run the "
                "merged results' invalid cases with --filter-pattern instead")
    return None


def rerun_suite(
    times: int, suite: Suite, entry: SuiteRun, manifest: RunManifest, folder: Path, options: dict[str, object],
    interrupts: object, again: RunAgain,
) -> int | None:
    """The runner's call (``runner/run.py``): the suite's own description and promptfoo flags, stopped
    by an interrupt."""
    args = list(options.get("promptfoo_args") or [])  # type: ignore[call-overload]  # a list[str] in run()'s untyped **options
    description = read_flags(args).description or eval_description(suite, manifest.mode, manifest.git_revision)
    return rerun_invalid(times, suite, entry, manifest, folder, args, description, again,
                         stopped=lambda: bool(getattr(interrupts, "requested", False)))
