"""``agent-evals merge FILE… [-o merged.json]``: shards' results files into one eval.

The files of one suite (or of several, with ``{suite}`` in ``-o``) are checked and merged
(:mod:`agent_evals.shards.merge`), written (by default ``<folder of the first file>/<suite>.json``),
and imported into the viewer's database (``promptfoo import --force``: merging the same shards
again replaces the eval), so the viewer, ``agent-evals report`` and ``gate`` see one eval.
Then the pull requests that runs which died (a killed shard) left in a data dir on this machine
are abandoned (:func:`agent_evals.runner.cleanup_command.sweep_dead_runs`).

Exit status: 0 merged; 1 merged, but a planned shard is missing (named, with its cases: the
report marks the eval incomplete); 2 nothing merged: a file that is not a shard's, files of
different suites or configs, a shard given twice, an import that failed.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from agent_evals import hints
from agent_evals.paths import project_root
from agent_evals.runner.promptfoo_process import promptfoo_command, promptfoo_env
from agent_evals.shards.merge import Merged, MergePlan, ShardFile, check_shards, merge_shards, read_shard_files
from agent_evals.suites.shard_spec import ShardError

SUITE = "{suite}"
MAX_LISTED = 8


def merge_command(files: Sequence[Path], *, output: str | None = None, import_eval: bool = True) -> int:
    try:
        plans = _plans(read_shard_files(files), output)
        merged = [merge_shards(plan, _output(plan, output)) for plan in plans]
        for result in merged:
            if import_eval:
                import_results_file(result.path)
    except ShardError as exc:
        message = str(exc)
        print(message if message.startswith("merge:") else f"merge: {message}", file=sys.stderr)
        return 2
    for plan, result in zip(plans, merged, strict=True):
        _say(plan, result, imported=import_eval)
    _sweep()
    return 1 if any(result.missing for result in merged) else 0


def _plans(files: list[ShardFile], output: str | None) -> list[MergePlan]:
    suites = sorted({f.stamp.suite for f in files})
    if len(suites) > 1 and (output is None or SUITE in output):
        return [check_shards([f for f in files if f.stamp.suite == suite]) for suite in suites]
    return [check_shards(files)]


def _output(plan: MergePlan, output: str | None) -> Path:
    if output is None:
        return plan.files[0].path.parent / f"{plan.suite}.json"
    return Path(output.replace(SUITE, plan.suite))


def import_results_file(path: Path) -> None:
    """``promptfoo import --force`` of a results file into the viewer's database (a one-line ShardError)."""
    done = subprocess.run(
        promptfoo_command("import", "--force", str(path.resolve())), env=promptfoo_env(), cwd=project_root(),
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        said = next((line for line in reversed(done.stdout.splitlines() + done.stderr.splitlines()) if line.strip()), "")
        raise ShardError(f"merge: promptfoo import {path} failed (exit {done.returncode}): {said.strip()}")


def _say(plan: MergePlan, result: Merged, *, imported: bool) -> None:
    total = plan.stamp.shard.total
    where = f"imported as {result.eval_id}" if imported else f"eval {result.eval_id}, not imported"
    print(
        f"merge: {plan.suite}: shard(s) {', '.join(map(str, result.shards))} of {total}, {result.rows} row(s) "
        f"→ {result.path} ({where})",
        flush=True,
    )
    if result.missing:
        cases = plan.missing_cases()
        shown = ", ".join(cases[:MAX_LISTED]) + (", …" if len(cases) > MAX_LISTED else "")
        names = ", ".join(f"{n}/{total}" for n in result.missing)
        print(
            f"merge: {plan.suite}: shard(s) {names} missing: {len(cases)} case(s) did not run ({shown}); "
            "the merged eval is incomplete",
            flush=True,
        )
    shown = result.eval_id if imported else hints.shown_path(result.path)
    print(f"report: {hints.command('report', shown)}", flush=True)


def _sweep() -> None:
    from agent_evals.runner.cleanup_command import sweep_dead_runs  # lazy: keeps agent_evals.runner.merge_command's start-up as small as it is

    for line in sweep_dead_runs():
        print(f"merge: {line}", flush=True)
