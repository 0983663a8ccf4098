"""``agent-evals run <suite|all> --shard I/N``: the part of each suite this machine runs, with
its own system (the portal: a data dir of its own), results database, and a results file named for the shard.

For each suite the runner computes the selection (the user's filters, as Promptfoo applies
them), plans the shards (:mod:`agent_evals.shards.plan`), and runs this shard's tests through
Promptfoo (``--filter-pattern`` of their exact descriptions: :mod:`agent_evals.shards.selection`).
So that shards can run at once on one machine, a shard gets a system of its own (the suite's
system decides how: the portal serves ``data/portal.shard-2-of-4`` on the suite's stable port +
100 × I when free), and its eval is
stored in the run's folder (``data/runs/<run id>/promptfoo/``) rather than the viewer's
database: ``agent-evals merge`` imports the merged eval there. Once Promptfoo has written the
results file, the runner adds the shard's stamp to it (:mod:`agent_evals.shards.stamp`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_evals.suites.promptfoo_args import Flags, select
from agent_evals.suites.files import LoadedSuite, TestEntry, load_suite
from agent_evals.suites.discovery import Suite
from agent_evals.shards.plan import PlannedCase, plan_shards
from agent_evals.shards.selection import description_pattern, json_outputs, shard_args
from agent_evals.suites.shard_spec import Shard, ShardError
from agent_evals.shards.stamp import ShardStamp, fingerprint, stamp_results_file
from agent_evals import hints
from agent_evals.paths import project_root
from agent_evals.report.rows import case_identity


@dataclass(frozen=True)
class SuiteShard:
    """One suite's share of a sharded run."""

    suite: Suite
    stamp: ShardStamp

    @property
    def shard(self) -> Shard:
        return self.stamp.shard

    @property
    def empty(self) -> bool:
        return not self.stamp.cases

    def promptfoo_dir(self, run_folder: Path) -> Path:
        return run_folder / "promptfoo"

    def args(self, promptfoo_args: Sequence[str]) -> list[str]:
        pattern = description_pattern(case.description for case in self.stamp.cases)
        return shard_args(promptfoo_args, pattern, self.shard)

    def clear_outputs(self, args: Sequence[str], cwd: Path) -> None:
        """Remove the shard's results files of an earlier run: a run that is stopped writes none, and
        an old one must not be merged as this one."""
        for path in _paths(json_outputs(args), cwd):
            path.unlink(missing_ok=True)

    def stamp_outputs(self, args: Sequence[str], cwd: Path) -> list[Path]:
        """Stamp every JSON results file Promptfoo wrote; the files stamped."""
        stamped = []
        for path in _paths(json_outputs(args), cwd):
            if path.is_file():
                stamp_results_file(path, self.stamp)
                stamped.append(path)
        return stamped

    def describe(self) -> str:
        cases = len(self.stamp.cases)
        return (
            f"shard {self.shard} of suite {self.suite.name}: {cases} of {len(self.stamp.selected)} case(s)"
            f" (balanced by {self.stamp.balanced_by})"
        )


def merge_hint(promptfoo_args: Sequence[str], shard: Shard) -> str:
    """The command that merges every shard's results files of a run: the JSON files it writes
    (``-o``, else ``results/{suite}.json``, named for the shard), every suite's and every shard's."""
    written = json_outputs(shard_args(promptfoo_args, "", shard))
    globs = dict.fromkeys(
        hints.shown_path(project_root() / path.replace("{suite}", "*").replace(shard.name, f"shard-*-of-{shard.total}"))
        for path in written
    )
    return hints.command("merge", *globs)


def _paths(outputs: Sequence[str], cwd: Path) -> list[Path]:
    return [Path(o) if Path(o).is_absolute() else cwd / o for o in outputs]


def plan_suite_shard(
    suite: Suite,
    flags: Flags,
    shard: Shard,
    *,
    run_id: str,
    mode: str,
    description: str,
    durations: Mapping[str, float] | None = None,
    git_revision: str | None = None,
) -> SuiteShard:
    """This shard's share of ``suite`` (raises ShardError when the selection cannot be sharded)."""
    loaded = load_suite(suite)
    chosen = select(loaded.tests, flags)
    if chosen is None:
        raise ShardError(
            f"--shard: the filters {', '.join(flags.unpredictable)} choose the cases during the run; "
            "a sharded run needs a selection the kit computes first (drop them, or filter by metadata or pattern)"
        )
    cases = tuple(PlannedCase(_case_id(t, i), t.description) for i, t in enumerate(chosen))
    plan = tuple(tuple(p) for p in plan_shards(cases, shard.total, durations))
    what = fingerprint([suite.name, _suite_content(loaded, chosen), description, mode, flags.repeat, plan])
    stamp = ShardStamp(
        suite=suite.name, shard=shard, fingerprint=what, run_id=run_id, mode=mode, repeat=flags.repeat,
        providers=max(1, len(loaded.providers)), selected=cases, plan=plan,
        balanced_by="durations" if durations else "cases", git_revision=git_revision,
    )
    return SuiteShard(suite, stamp)


def _case_id(test: TestEntry, index: int) -> str:
    """The id the report gives the test's rows (its metadata id, else the description's leading id)."""
    return case_identity({}, test.metadata, test.description, index)[0]


def _suite_content(loaded: LoadedSuite, chosen: Sequence[TestEntry]) -> dict[str, Any]:
    """What the suite's files say, as loaded: the config and each selected test."""
    return {
        "config": loaded.config,
        "tests": [[t.description, t.vars, t.metadata, t.asserts, t.options] for t in chosen],
    }
