"""``agent-evals baseline bless [RESULTS…] [-o evals/baseline.json]``: an explicit baseline.

A baseline is a stored report (``--format json``, ``agent-evals/report@1``) with a
``blessed`` record: when it was blessed, the git revision, suites, agents and models that
ran, how many graded runs its thinnest case has, and the grader versions. Several results
add up (``bless run-a run-b``: a case's runs of both), so a baseline can hold more runs
than one run has. The gate reads the record to say when a baseline is stale (older than
``baseline_max_age_days``) or unreliable (a case with fewer graded runs than
``min_baseline_runs``).

Refused (exit 2, one line): results that cannot be read, no case, no graded run at all
(every run errored: nothing to compare with), and results whose graders differ between
runs unless ``--across-grader-versions``. Said but blessed: cases with few graded runs, an
incomplete run, a replay.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from agent_evals.report.errors import ReportInputError
from agent_evals.report.evidence import MIN_RUNS
from agent_evals.report.format_json import report_to_json
from agent_evals.report.grader_diff import mixed_graders
from agent_evals.report.model import Blessing, Report

MAX_LISTED = 6


def bless(report: Report, *, now: datetime | None = None) -> Report:
    """``report`` with its blessing record (raises :class:`ReportInputError` when it cannot be a baseline)."""
    if not report.cases:
        raise ReportInputError("the results hold no case: nothing to bless")
    graded = [case.passed + case.failed for case in report.cases]
    if not any(graded):
        raise ReportInputError(
            f"every run of the {len(report.cases)} case(s) errored: no graded run to compare with (fix the errors, "
            "then bless a run)"
        )
    when = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    blessing = Blessing(
        blessed_at=when,
        git_revision=report.label.git_revisions[-1] if report.label.git_revisions else None,
        suites=tuple(sorted({case.suite for case in report.cases if case.suite})),
        agents=tuple(sorted({agent.name for _, agent in report.label.agents if agent.name})),
        models=tuple(sorted({agent.model for _, agent in report.label.agents if agent.model})),
        modes=report.label.modes,
        runs_per_case=min(graded),
        graders=tuple(sorted({f"{g.check} v{g.version}" for case in report.cases for g in case.graders})),
        eval_ids=report.label.eval_ids,
    )
    return replace(report, blessed=blessing)


def warnings(report: Report, min_runs: int = MIN_RUNS) -> list[str]:
    """What the baseline's reader must know: thin cases, an incomplete run, a replay."""
    out = []
    thin = [f"{c.id} {c.passed + c.failed}" for c in report.cases if c.passed + c.failed < min_runs]
    if thin:
        shown = ", ".join(thin[:MAX_LISTED]) + (", …" if len(thin) > MAX_LISTED else "")
        out.append(
            f"{len(thin)} case(s) have fewer than {min_runs} graded runs ({shown}): against them no regression can "
            "be shown (run with --repeat 3 or more, or bless several runs together)"
        )
    if not report.complete:
        out.append("the results are incomplete: " + "; ".join(report.incomplete))
    if "replay" in report.label.modes:
        out.append("the results are a replay: the models' answers as recorded, not the agent live")
    return out


def bless_command(specs: Sequence[str], *, output: Path, across_grader_versions: bool = False) -> int:
    from agent_evals.report.command import load_report  # lazy: keeps agent_evals.report.bless's start-up as small as it is

    try:
        report = load_report(specs)
        mixed = mixed_graders(report.cases)
        if mixed and not across_grader_versions:
            raise ReportInputError(
                "the runs were graded by different graders: " + "; ".join(change.line() for change in mixed)
                + ". Bless one kind of run, regrade the old ones (agent-evals regrade), or bless anyway with "
                "--across-grader-versions"
            )
        blessed = bless(report)
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(report_to_json(blessed), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except ReportInputError as exc:
        print(f"baseline bless: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"baseline bless: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    record = blessed.blessed
    assert record is not None
    print(
        f"baseline blessed: {len(blessed.cases)} case(s), at least {record.runs_per_case} graded run(s) each; "
        f"agent {', '.join(record.agents) or '?'} ({', '.join(record.models) or '?'}); "
        f"suite {', '.join(record.suites) or '?'}; rev {record.git_revision or '?'} → {output}"
    )
    for line in warnings(blessed):
        print(f"WARN {line}")
    return 0
