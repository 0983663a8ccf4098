"""``agent-evals report`` and ``agent-evals gate``: read, build, render or judge; thin.

Exit status of ``report``: 0 once the report is written, 2 when the results (or the
baseline) cannot be read. Of ``gate``: 0 the gate holds, 1 it is broken (each broken rule
one line), 2 it cannot decide (a bad gate file, unreadable results, no case at all, or results
that cannot show the agent: a replay, deciding checks not graded).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from agent_evals.paths import evals_dir
from agent_evals.report.build import build_report
from agent_evals.report.compare import Comparison, compare
from agent_evals.report.errors import ReportInputError
from agent_evals.report.format_json import report_from_json, report_to_json
from agent_evals.report.gate import check_gate
from agent_evals.report.gate_file import load_gate
from agent_evals.report.model import Report
from agent_evals.report.promptfoo_json import read_json, read_results_file, report_format
from agent_evals.report.sources import load_results

Format = Literal["terminal", "markdown", "json", "junit"]
GATE_FILE = "gate.yaml"


def report_command(
    specs: Sequence[str],
    *,
    k: int | None = None,
    output_format: Format = "terminal",
    output: Path | None = None,
    baseline: str | None = None,
    across_grader_versions: bool = False,
) -> int:
    try:
        report = load_report(specs, k)
        comparison = (compare(report, load_baseline(baseline, k), across_grader_versions=across_grader_versions)
                      if baseline else None)
        _write(render(report, comparison, output_format), output)
    except ReportInputError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    return 0


def gate_command(
    specs: Sequence[str], *, gate_file: Path | None = None, baseline: str | None = None,
    across_grader_versions: bool = False,
) -> int:
    try:
        gate = load_gate(gate_file or evals_dir() / GATE_FILE)
        report = load_report(specs, gate.k)
        if not report.cases:
            raise ReportInputError("the results hold no case: nothing to judge")
        comparison = (compare(report, load_baseline(baseline, gate.k), across_grader_versions=across_grader_versions)
                      if baseline else None)
    except ReportInputError as exc:
        print(f"gate: cannot decide: {exc}", file=sys.stderr)
        return 2
    verdict = check_gate(gate, report, comparison)
    print("\n".join(verdict.lines()))
    return verdict.exit_code


def load_report(specs: Sequence[str], k: int | None = None) -> Report:
    loaded = load_results(list(specs))
    return build_report(loaded.evals, loaded.runs, loaded.rows, k=k)


def load_baseline(spec: str, k: int | None = None) -> Report:
    """A baseline: a stored report (``--format json``), a Promptfoo ``-o`` file, an eval or run id."""
    path = Path(spec)
    if path.suffix == ".json" or path.is_file():
        if report_format(path):
            return report_from_json(read_json(path), str(path))
        info, rows = read_results_file(path)
        return build_report([info], [], rows, k=k)
    return load_report([spec], k)


def render(report: Report, comparison: Comparison | None, output_format: Format) -> str:
    if output_format == "json":
        return json.dumps(report_to_json(report, comparison), indent=2, ensure_ascii=False) + "\n"
    if output_format == "markdown":
        from agent_evals.report.format_markdown import render_markdown  # lazy: keeps agent_evals.report.command's start-up as small as it is

        return render_markdown(report, comparison)
    if output_format == "junit":
        from agent_evals.report.format_junit import render_junit  # lazy: keeps agent_evals.report.command's start-up as small as it is

        return render_junit(report)
    from agent_evals.report.format_terminal import render_terminal  # lazy: keeps agent_evals.report.command's start-up as small as it is

    return render_terminal(report, comparison)


def _write(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ReportInputError(f"cannot write {output}: {exc.strerror or exc}") from None
