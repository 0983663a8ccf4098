"""``agent-evals run SUITE --repeat-until-decided MAX [--baseline BASELINE]``: repeats that stop
when each case's verdict is decided.

A suite runs in **rounds**, each a ``promptfoo eval`` of its own with the suite's portal: the
first runs every selected case twice (the fewest runs that can settle a verdict), each later
round runs once more only the cases whose verdict could still change — the sequential rule of
:mod:`agent_evals.report.sequential`, against the baseline when one is given — until none is
left or every case has ``MAX`` runs. Each run is a fresh conversation (the response cache is
off under the runner). The rounds' evals are kept in the run's folder
(``data/runs/<run id>/promptfoo-rounds/<suite>``, like a shard's; suites side by side never
share one), and their rows are merged into **one eval** per suite, imported into the viewer's
database (and written to the ``-o`` JSON files asked for): ``report`` and ``gate`` read it as
one run, with the runs each case took (``config.metadata.agentEvalsRounds``; the run
manifest's ``until_decided``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_evals.report.rows import Row
from agent_evals.report.sequential import FIRST_ROUND, decide
from agent_evals.runner.rounds_merge import merge_rounds
from agent_evals.suites.discovery import Suite
from agent_evals.shards.selection import OUTPUT_FLAGS, REPLACED, description_pattern, rewrite_flags
from agent_evals.report.errors import ReportInputError
from agent_evals.report.promptfoo_json import read_results_file
from agent_evals.suites.promptfoo_args import read_flags
from agent_evals.suites.shard_spec import ShardError

MAX_LISTED = 8
RunRound = Callable[[list[str], Path], int]  # (promptfoo args, its results database folder) -> exit status


class UntilDecidedError(ValueError):
    """The flags cannot run until decided (one line)."""


@dataclass
class Rounds:
    """One suite's rounds so far: each case's runs, and what the rule said."""

    max_runs: int
    baseline: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # case id -> (passes, graded runs)
    counts: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # (provider, id) -> [pass, fail, error]
    descriptions: dict[tuple[str, str], str] = field(default_factory=dict)
    planned: dict[str, int] = field(default_factory=dict)  # case id -> the runs it was scheduled for
    decided: dict[str, str] = field(default_factory=dict)  # case id -> why (the last rule's answer)
    files: list[Path] = field(default_factory=list)

    def add(self, rows: Sequence[Row], repeat: int) -> None:
        seen = set()
        for row in rows:
            key = (row.provider, row.case_id)
            counts = self.counts.setdefault(key, [0, 0, 0])
            counts[("pass", "fail", "error").index(row.outcome)] += 1
            self.descriptions[key] = row.description
            seen.add(row.case_id)
        for case in seen:
            self.planned[case] = self.planned.get(case, 0) + repeat

    def undecided(self) -> list[tuple[str, str]]:
        """The cases that run again; each case's answer is kept in :attr:`decided`."""
        out = []
        for key, (passed, failed, errors) in self.counts.items():
            decision = decide(passed, failed, errors, max_runs=self.max_runs, baseline=self.baseline.get(key[1]),
                              cases=len(self.counts))
            self.decided[key[1]] = decision.why
            if not decision.decided:
                out.append(key)
        return out

    def summary(self) -> dict[str, Any]:
        runs = {case: 0 for _, case in self.counts}
        for (_, case), counts in self.counts.items():
            runs[case] = max(runs[case], sum(counts))
        return {"max": self.max_runs, "rounds": len(self.files), "runs": runs, "planned": dict(self.planned),
                "decided": dict(self.decided), "baseline": bool(self.baseline)}


def check_flags(args: Sequence[str], max_runs: int) -> None:
    """Refuse what rounds cannot honour, before anything runs."""
    flags = read_flags(args)
    if any(token == "--repeat" or token.startswith("--repeat=") for token in args):
        raise UntilDecidedError(f"--repeat-until-decided {max_runs} runs each case up to {max_runs} times: drop --repeat")
    other = [o for o in flags.outputs if not o.endswith(".json")]
    if other:
        raise UntilDecidedError(f"--repeat-until-decided writes one merged JSON results file per suite; "
                                f"{', '.join(other)} is not .json")
    if flags.unpredictable:
        raise UntilDecidedError(f"--repeat-until-decided needs a selection the kit computes first; drop "
                                f"{', '.join(flags.unpredictable)}")


def until_decided_options(until_decided: int | None, baseline: str | None, shard: str | None,
                          promptfoo_args: list[str]) -> dict[str, tuple[int, int]] | None:
    """``--repeat-until-decided``'s flags checked, and its baseline's graded runs per case (raises ValueError)."""
    if until_decided is None:
        if baseline is not None:
            raise ValueError("--baseline is the baseline of --repeat-until-decided's regression verdict: give both")
        return None
    if shard is not None:
        raise ValueError("--repeat-until-decided runs a suite in rounds; a shard (--shard) cannot: run one or the other")
    check_flags(promptfoo_args, until_decided)
    if baseline is None:
        return None
    from agent_evals.report.command import load_baseline  # lazy: keeps agent_evals.golden.record's start-up as small as it is

    try:
        report = load_baseline(baseline)
    except ReportInputError as exc:
        raise ValueError(f"--baseline: {exc}") from None
    return {case.id: (case.passed, case.passed + case.failed) for case in report.cases}


def run_rounds(suite: Suite, *, max_runs: int, args: Sequence[str], folder: Path, run_round: RunRound,
               stopped: Callable[[], bool], baseline: Mapping[str, tuple[int, int]] | None = None,
               say: Callable[[str], None] = print) -> tuple[int, Rounds]:
    """Run ``suite`` in rounds until every case is decided; the last exit status and the rounds."""
    rounds = Rounds(max_runs, dict(baseline or {}))
    base = rewrite_flags(args, (*OUTPUT_FLAGS, "--repeat"))
    selection = base
    code = 0
    while True:
        number = len(rounds.files) + 1
        repeat = min(FIRST_ROUND, max_runs) if number == 1 else 1
        out = folder / "rounds" / suite.name / f"round-{number}.json"
        out.unlink(missing_ok=True)
        code = run_round([*selection, "--repeat", str(repeat), "-o", str(out)],
                         folder / "promptfoo-rounds" / suite.name)
        if not out.is_file():
            break
        rounds.files.append(out)
        rounds.add(read_results_file(out)[1], repeat)
        if stopped():
            break
        left = rounds.undecided()
        decided = len(rounds.counts) - len(left)
        say(f"round {number} of {suite.name}: {decided} of {len(rounds.counts)} case(s) decided"
            + (f"; again: {_ids([case for _, case in left])}" if left else ""))
        if not left:
            break
        pattern = description_pattern(rounds.descriptions[key] for key in left)
        selection = [*rewrite_flags(base, REPLACED), "--filter-pattern", pattern]
    return code, rounds


def merged_output(suite: Suite, args: Sequence[str], folder: Path, rounds: Rounds) -> tuple[Path, str]:
    """The rounds' rows as one eval: written to the first ``-o`` JSON asked for (copied to the others),
    else ``<run folder>/rounds/<suite>/<suite>.json``."""
    targets = [Path(o.replace("{suite}", suite.name)) for o in read_flags(args).outputs]
    path = targets[0] if targets else folder / "rounds" / suite.name / f"{suite.name}.json"
    document = merge_rounds(rounds.files, stamp=rounds.summary())
    text = json.dumps(document, indent=2, ensure_ascii=False)
    for target in targets or [path]:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return path, str(document["evalId"])


def suite_until_decided(suite: Suite, *, max_runs: int, args: Sequence[str], folder: Path, run_round: RunRound,
                        stopped: Callable[[], bool], baseline: Mapping[str, tuple[int, int]] | None,
                        on_merged: Callable[[str, dict[str, Any]], None]) -> int:
    """One suite in rounds, merged into one eval imported into the viewer's database; Promptfoo's
    exit status of the whole (100 when a case failed or errored), or the interrupt's."""
    from agent_evals.runner.merge_command import import_results_file  # lazy: keeps agent_evals.golden.record's start-up as small as it is

    code, rounds = run_rounds(suite, max_runs=max_runs, args=args, folder=folder, run_round=run_round,
                              stopped=stopped, baseline=baseline)
    if not rounds.files:
        return code
    path, eval_id = merged_output(suite, args, folder, rounds)
    try:
        import_results_file(path)
    except ShardError as exc:
        print(f"{suite.name}: {str(exc).removeprefix('merge: ')}", flush=True)
        return 2
    on_merged(eval_id, rounds.summary())
    print(saved_line(suite.name, rounds), flush=True)
    if stopped():
        return code
    return 100 if any(failed or errors for _, failed, errors in rounds.counts.values()) else 0


def saved_line(suite: str, rounds: Rounds) -> str:
    runs = rounds.summary()["runs"]
    used, flat = sum(runs.values()), rounds.max_runs * len(runs)
    early = [f"{case} {n}" for case, n in runs.items() if n < rounds.max_runs]
    return (f"{suite}: repeat until decided (at most {rounds.max_runs} runs a case): {used} of {flat} runs, "
            f"{flat - used} saved against --repeat {rounds.max_runs}" + (f"; decided early: {_ids(early)}" if early else ""))


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(ids[:MAX_LISTED]) + (f", and {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else "")
