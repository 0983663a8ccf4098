"""Runs to a verdict: ``agent-evals report`` and ``agent-evals gate`` (``docs/report.md``).

Read Promptfoo's results (``sources``: the database or ``-o`` files, with the kit's run
manifests), turn rows into cases with pass^k and flaky labels, groups, metrics and failure
patterns (``build``, pure), compare with a baseline (``compare``), judge with a gate file
(``gate_file``, ``gate``), and render (``format_terminal``, ``format_markdown``,
``format_json``, ``format_junit``). ``summary_lines`` is the short form for the end of a run.
"""

from agent_evals.report.build import build_report
from agent_evals.report.compare import Comparison, compare
from agent_evals.report.errors import ReportInputError
from agent_evals.report.gate import GateVerdict, check_gate
from agent_evals.report.gate_file import Gate, load_gate, parse_gate
from agent_evals.report.model import CaseSummary, GroupSummary, MetricSummary, Report
from agent_evals.report.pass_k import pass_hat_k
from agent_evals.report.sources import load_results, load_run
from agent_evals.report.summary import summary_lines

__all__ = [
    "CaseSummary",
    "Comparison",
    "Gate",
    "GateVerdict",
    "GroupSummary",
    "MetricSummary",
    "Report",
    "ReportInputError",
    "build_report",
    "check_gate",
    "compare",
    "load_gate",
    "load_results",
    "load_run",
    "parse_gate",
    "pass_hat_k",
    "summary_lines",
]
