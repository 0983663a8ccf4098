"""The short form for the end of ``agent-evals run``: :func:`summary_lines`.

    from agent_evals.report import summary_lines
    for line in summary_lines(manifest):        # or summary_lines(["eval-…", "eval-…"])
        print(line)

A few lines: totals, pass^k and flaky cases, errors by kind, not-graded checks, complete
or not, and the command that prints the whole report. It never raises: results it cannot
read give one line saying so. Call it once the manifest records the run's end
(``finished_at``, ``interrupted``); before that the run counts as still running.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_evals import hints
from agent_evals.report import figures as f
from agent_evals.report.budget_lines import budget_lines
from agent_evals.report.build import build_report
from agent_evals.report.errors import ReportInputError
from agent_evals.report.invalid_lines import invalid_lines, simulator_lines
from agent_evals.report.model import Report
from agent_evals.report.sources import load_results, load_run
from agent_evals.suites.manifest import RunManifest

MAX_LISTED = 6


def summary_lines(source: RunManifest | Sequence[str], *, config_dir: Path | None = None) -> list[str]:
    """The short report of a run (its manifest) or of eval ids / ``-o`` files."""
    try:
        if isinstance(source, RunManifest):
            loaded = load_run(source, config_dir)
            command = hints.command("report", source.run_id)
        else:
            loaded = load_results(list(source), config_dir)
            command = hints.command("report", *(s if s.startswith(("eval-", "run-")) or s == "latest"
                                                else hints.shown_path(s) for s in source))
        report = build_report(loaded.evals, loaded.runs, loaded.rows)
    except ReportInputError as exc:
        return [f"report: {exc}"]
    return [*short_lines(report), f"whole report: {command.strip()}"]


def short_lines(report: Report) -> list[str]:
    t = report.totals
    lines = [
        f"report: {t.cases} case(s), {t.runs} run(s): {t.passed} passed, {t.failed} failed, "
        f"{t.errors} error(s){f.apart(t)}; pass^k ({f.k_label(report)}) {f.rate(t.pass_hat_k)}"
    ]
    flaky = [c.id for c in report.cases if c.flaky]
    failing = [c.id for c in report.cases if c.verdict == "fail"]
    if flaky or failing:
        lines.append(
            f"flaky: {len(flaky)} {_ids(flaky)}; failing every run: {len(failing)} {_ids(failing)}".rstrip()
        )
    if report.errors_by_kind:
        lines.append(
            "errors by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(report.errors_by_kind.items()))
        )
    if t.not_graded:
        lines.append(f"not graded: {t.not_graded} check(s) (left out of the scores)")
    lines += invalid_lines(report, limit=MAX_LISTED)
    lines += simulator_lines(report) if any(q.flagged for q in report.simulator) else []
    lines += budget_lines(report.budget)
    lines.append("complete" if report.complete else "INCOMPLETE: " + "; ".join(report.incomplete))
    return lines


def _ids(ids: list[str]) -> str:
    if not ids:
        return ""
    more = ", …" if len(ids) > MAX_LISTED else ""
    return "(" + ", ".join(ids[:MAX_LISTED]) + more + ")"
