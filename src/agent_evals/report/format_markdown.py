"""The report in GitHub-flavoured markdown: a CI job summary or a pull-request comment.

The verdict and the cases that need attention come first; all cases, groups, metrics and
usage follow in collapsed sections.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agent_evals.report import figures as f
from agent_evals.report.budget_lines import budget_lines
from agent_evals.report.compare import ChangeKind, Comparison
from agent_evals.report.evidence_lines import evidence_head, evidence_lines
from agent_evals.report.invalid_lines import invalid_lines, simulator_lines
from agent_evals.report.model import GroupSummary, Report

REASON_WIDTH = 160


def render_markdown(report: Report, comparison: Comparison | None = None, title: str = "Agent evals") -> str:
    mark = "✅" if report.complete and not report.totals.failed else "❌"
    out = [
        f"## {mark} {title}",
        "",
        f.headline(report) + ".",
        "",
        f"Ran: {f.label(report.label)}.",
        f"Evals: {_code_list(e.eval_id for e in report.evals)}.",
    ]
    if not report.complete:
        out += ["", "**Incomplete:**", *[f"- {_text(reason)}" for reason in report.incomplete]]
    if comparison is not None:
        out += ["", *_comparison(comparison)]
    attention = [c for c in report.cases if c.verdict != "pass"]
    if attention:
        out += ["", "### Cases that did not pass every run", ""]
        out += _table(
            ["case", "verdict", "runs", "pass", "fail", "err", "pass^k", "first failure"],
            [
                [
                    _case_name(c.id, c.provider, report),
                    f.status(c),
                    str(c.runs),
                    str(c.passed),
                    str(c.failed),
                    str(c.errors),
                    f.rate(c.pass_hat_k),
                    _text(f.brief(c.first_failure, REASON_WIDTH) or (c.first_error or "")),
                ]
                for c in attention
            ],
        )
    if report.patterns:
        out += ["", "### Failures by metric, tool and path", ""]
        out += [f"- {f.pattern_line(p)}" for p in report.patterns]
    if report.errors_by_kind:
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(report.errors_by_kind.items()))
        out += ["", f"**Errors** (runs that could not happen, not failures): {kinds}."]
    if report.invalid_runs:
        head, *runs = invalid_lines(report, limit=len(report.invalid_runs))
        out += ["", f"**{head[0].upper()}{head[1:]}.**", "", *[f"- {_cell(line.strip())}" for line in runs]]
    if report.budget is not None:
        out += ["", *[f"**{line[0].upper()}{line[1:]}.**" for line in budget_lines(report.budget)]]
    if report.totals.not_graded:
        cases = ", ".join(c.id for c in report.cases if c.not_graded)
        out += [
            "",
            f"**Not graded:** {report.totals.not_graded} check(s) in {cases}, left out of the scores.",
        ]
    out += _details(
        f"All {len(report.cases)} cases (pass^k {f.k_label(report)})",
        _table(
            [
                "case",
                "group",
                "priority",
                "runs",
                "pass",
                "fail",
                "err",
                "pass^k",
                "verdict",
                "turns",
                "tools",
                "ends",
            ],
            [
                [
                    _case_name(c.id, c.provider, report),
                    c.group or "-",
                    c.priority or "-",
                    str(c.runs),
                    str(c.passed),
                    str(c.failed),
                    str(c.errors),
                    f.rate(c.pass_hat_k),
                    f.status(c),
                    f.mean(c.mean_turns),
                    f.mean(c.mean_tool_calls),
                    f.ends(c.ends),
                ]
                for c in report.cases
            ],
        ),
    )
    out += _details(
        "Groups and priorities",
        [*_groups("group", report.groups), "", *_groups("priority", report.priorities)],
    )
    out += _details(
        "Metrics",
        _table(
            ["metric", "better", "mean", "pass rate", "rows"],
            [
                [m.name, m.direction, f.rate(m.mean), f.percent(m.pass_rate), str(m.rows)]
                for m in report.metrics
            ],
        ),
    )
    if report.simulator or report.fixed_user_rows:
        _, *quality = simulator_lines(report)
        items = [f"- {line.strip()}" if not line.startswith("    ") else f"  - {line.strip()}" for line in quality]
        out += _details("Simulated users (share of conversations the user checks flagged)", items)
    out += _details("Usage by role", [f"- {line}" for line in f.usage_lines(report.usage)])
    out += [f"> {note}" for note in report.notes]
    return "\n".join(out) + "\n"


def _comparison(comparison: Comparison) -> list[str]:
    regressions = comparison.of("regression")
    head = f"### {'❌' if regressions else '✅'} Against the baseline"
    out = [head, "", f"Baseline: {f.label(comparison.baseline)}.", f"Current: {f.label(comparison.current)}."]
    if comparison.matched_by == "id":
        out.append("The providers differ: cases are matched by id alone.")
    if comparison.grader_changes:
        out.append("**Graders differ** (compared anyway, `--across-grader-versions`): "
                   + "; ".join(change.line() for change in comparison.grader_changes) + ".")
    out.append("")
    sections: tuple[tuple[ChangeKind, str], ...] = (
        ("regression", "Regressions"),
        ("improvement", "Improvements"),
        ("changed", "Changed"),
        ("new", "New cases"),
        ("removed", "Removed cases"),
        ("no_verdict", "No verdict"),
    )
    for kind, title in sections:
        cases = comparison.of(kind)
        if cases:
            out.append(
                f"- **{title}** ({len(cases)}): "
                + ", ".join(f"`{c.id}` {c.before or '-'} → {c.after or '-'}" for c in cases)
            )
    out.append(f"- Unchanged: {len(comparison.of('same'))} case(s)")
    if comparison.evidence is not None:
        out += ["", evidence_head(comparison.evidence)[0].upper() + evidence_head(comparison.evidence)[1:], ""]
        out += [f"- {line}" for line in evidence_lines(comparison.evidence, code="`")]
    moved = [m for m in comparison.metrics if m.delta]
    if moved:
        out += [
            "",
            *_table(
                ["metric", "baseline", "current", "change", ""],
                [
                    [m.name, f.rate(m.before), f.rate(m.after), f"{m.delta:+.3f}", "worse" if m.worse else ""]
                    for m in moved
                ],
            ),
        ]
    return out


def _groups(title: str, groups: Sequence[GroupSummary]) -> list[str]:
    return _table([title, *f.GROUP_HEADER, "ends"], [[g.name, *f.group_counts(g), f.ends(g.ends)] for g in groups])


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    if not rows:
        return ["(none)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    return lines + ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]


def _details(summary: str, body: list[str]) -> list[str]:
    return ["", "<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]


def _cell(text: str | None) -> str:
    return f.one_line(text, REASON_WIDTH).replace("|", "\\|")


def _text(text: str) -> str:
    """Plain text in markdown: ``<id>`` in a PR URL pattern would be read as an HTML tag and vanish."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _case_name(case_id: str, provider: str, report: Report) -> str:
    many = len({c.provider for c in report.cases}) > 1
    return f"`{case_id}` ({provider})" if many else f"`{case_id}`"


def _code_list(items: Iterable[str]) -> str:
    return ", ".join(f"`{item}`" for item in items) or "none"
