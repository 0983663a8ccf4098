"""The report as plain-text tables for a terminal (the default format), at most 100 columns."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from agent_evals.report import figures as f
from agent_evals.report.budget_lines import budget_lines
from agent_evals.report.compare import ChangeKind, Comparison
from agent_evals.report.evidence_lines import evidence_head, evidence_lines
from agent_evals.report.invalid_lines import invalid_lines, simulator_lines
from agent_evals.report.model import CaseSummary, GroupSummary, Report

WIDTH = 100
WRAP_INDENT = "      "


def render_terminal(report: Report, comparison: Comparison | None = None) -> str:
    out = [f.one_line(f.headline(report), WIDTH), f.one_line(f"evals: {f.evals(report)}", WIDTH)]
    out.append(f.one_line(f"ran: {f.label(report.label)}", WIDTH))
    out += [f.one_line(line, WIDTH) for line in f.until_decided_lines(report)]
    out.append("COMPLETE" if report.complete else "INCOMPLETE: " + "; ".join(report.incomplete))
    out += ["", *_cases(report)]
    failing = [case for case in report.cases if case.first_failure]
    if failing:
        out += ["", "first failure of each failing case:"]
        for case in failing:  # on two lines at most, so that what went wrong fits whole
            head = f"  {case.id} [{case.failures[0].metric}] "
            line = head + f.brief(case.first_failure, 2 * WIDTH - len(head) - len(WRAP_INDENT))
            out += textwrap.wrap(line, WIDTH, subsequent_indent=WRAP_INDENT, break_on_hyphens=False) or [head]
    for title, groups in (("group", report.groups), ("priority", report.priorities)):
        if groups:
            out += ["", *_groups(title, groups)]
    if report.metrics:
        out += ["", *_metrics(report)]
    if report.patterns:
        out += ["", "failures by metric, tool and path:"]
        out += [f"  {f.one_line(f.pattern_line(p, code=''), WIDTH - 2)}" for p in report.patterns]
    if report.errors_by_kind:
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(report.errors_by_kind.items()))
        out += ["", f"errors by kind (not failures): {kinds}"]
    if report.invalid_runs:
        out += ["", *[f.one_line(line, WIDTH) for line in invalid_lines(report)]]
    if report.simulator or report.fixed_user_rows:
        out += ["", *[f.one_line(line, WIDTH) for line in simulator_lines(report)]]
    if report.totals.not_graded:
        cases = ", ".join(c.id for c in report.cases if c.not_graded)
        out += ["", f"not graded: {report.totals.not_graded} check(s) in {cases} (left out of the scores)"]
    out += ["", "usage by role:", *[f"  {line}" for line in f.usage_lines(report.usage)]]
    out += budget_lines(report.budget)
    out += [f"note: {note}" for note in report.notes]
    if comparison is not None:
        out += ["", *comparison_lines(comparison)]
    return "\n".join(out) + "\n"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], last_flex: bool = False) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    if last_flex:
        widths[-1] = max(12, WIDTH - sum(w + 1 for w in widths[:-1]))
    lines = []
    for cells in [header, *rows]:
        cut = [c if len(c) <= w else f.one_line(c, w) for c, w in zip(cells, widths, strict=True)]
        lines.append(" ".join(c.ljust(w) for c, w in zip(cut, widths, strict=True)).rstrip())
    return lines


def _cases(report: Report) -> list[str]:
    providers = len({c.provider for c in report.cases}) > 1
    header = [
        "case",
        *(["provider"] if providers else []),
        "group",
        "prio",
        "runs",
        "pass",
        "fail",
        "err",
        "pass^k",
        "verdict",
        "turns",
        "tools",
        "ends",
    ]
    rows = [_case_row(case, providers) for case in report.cases]
    return [f"cases (pass^k {f.k_label(report)}):", *_table(header, rows, last_flex=True)]


def _case_row(case: CaseSummary, providers: bool) -> list[str]:
    last = f.ends(case.ends) + (f" ({f.ends(case.error_kinds)})" if case.errors else "") + f.apart(case)
    return [
        case.id,
        *([case.provider] if providers else []),
        case.group or "-",
        case.priority or "-",
        str(case.runs),
        str(case.passed),
        str(case.failed),
        str(case.errors),
        f.rate(case.pass_hat_k),
        f.status(case),
        f.mean(case.mean_turns),
        f.mean(case.mean_tool_calls),
        last,
    ]


def _groups(title: str, groups: Sequence[GroupSummary]) -> list[str]:
    header = [title, *f.GROUP_HEADER, "turns", "tools", "ends"]
    rows = [
        [g.name, *f.group_counts(g), f.mean(g.mean_turns), f.mean(g.mean_tool_calls), f.ends(g.ends)] for g in groups
    ]
    return _table(header, rows, last_flex=True)


def _metrics(report: Report) -> list[str]:
    header = ["metric", "better", "mean", "pass rate", "rows"]
    rows = [
        [m.name, m.direction, f.rate(m.mean), f.percent(m.pass_rate), str(m.rows)] for m in report.metrics
    ]
    return _table(header, rows)


def comparison_lines(comparison: Comparison) -> list[str]:
    out = [
        "against the baseline:",
        f"  baseline: {f.one_line(f.label(comparison.baseline), WIDTH - 12)}",
        f"  current:  {f.one_line(f.label(comparison.current), WIDTH - 12)}",
    ]
    if comparison.matched_by == "id":
        out.append("  (the providers differ: cases matched by id alone)")
    if comparison.grader_changes:
        out.append("  graders differ (compared anyway, --across-grader-versions):")
        out += [f"    {f.one_line(change.line(), WIDTH - 4)}" for change in comparison.grader_changes]
    sections: tuple[tuple[ChangeKind, str], ...] = (
        ("regression", "regressions"),
        ("improvement", "improvements"),
        ("changed", "changed"),
        ("new", "new cases"),
        ("removed", "removed cases"),
        ("no_verdict", "no verdict"),
    )
    for kind, title in sections:
        cases = comparison.of(kind)
        if cases:
            listed = ", ".join(f"{c.id} {c.before or '-'}→{c.after or '-'}" for c in cases)
            out.append("  " + f.one_line(f"{title} ({len(cases)}): {listed}", WIDTH - 2))
    out.append(f"  unchanged: {len(comparison.of('same'))} case(s)")
    if comparison.evidence is not None:
        out.append("  " + f.one_line(evidence_head(comparison.evidence), WIDTH - 2))
        out += [f"    {f.one_line(line, WIDTH - 4)}" for line in evidence_lines(comparison.evidence)]
    moved = [m for m in comparison.metrics if m.delta]
    if moved:
        out.append("  metrics (mean, baseline → current):")
        for m in moved:
            mark = "  worse" if m.worse else ""
            out.append(f"    {m.name}: {f.rate(m.before)} → {f.rate(m.after)} ({m.delta:+.3f}){mark}")
    return out
