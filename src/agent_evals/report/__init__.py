"""Runs to a verdict: ``agent-evals report`` and ``agent-evals gate`` (``docs/report.md``).

Read Promptfoo's results (``sources``: the database or ``-o`` files, with the kit's run
manifests), turn rows into cases with pass^k and flaky labels, groups, metrics and failure
patterns (``build``, pure), compare with a baseline (``compare``), judge with a gate file
(``gate_file``, ``gate``), and render (``format_terminal``, ``format_markdown``,
``format_json``, ``format_junit``). ``summary_lines`` is the short form for the end of a run.
"""

from typing import TYPE_CHECKING

from agent_evals.lazy_exports import lazy_exports

# loaded with the package: ``compare`` is also the name of its module, which, imported later, would
# take the name over (the rest of the report's modules load when one of their names is first used)
from agent_evals.report.compare import Comparison, compare

if TYPE_CHECKING:
    from agent_evals.report.build import build_report
    from agent_evals.report.errors import ReportInputError
    from agent_evals.report.gate import GateVerdict, check_gate
    from agent_evals.report.gate_file import Gate, load_gate, parse_gate
    from agent_evals.report.model import CaseSummary, GroupSummary, MetricSummary, Report
    from agent_evals.report.pass_k import pass_hat_k
    from agent_evals.report.sources import load_results, load_run
    from agent_evals.report.summary import summary_lines

__getattr__ = lazy_exports(__name__, {
    "build_report": "build",
    "ReportInputError": "errors",
    "GateVerdict": "gate",
    "check_gate": "gate",
    "Gate": "gate_file",
    "load_gate": "gate_file",
    "parse_gate": "gate_file",
    "CaseSummary": "model",
    "GroupSummary": "model",
    "MetricSummary": "model",
    "Report": "model",
    "pass_hat_k": "pass_k",
    "load_results": "sources",
    "load_run": "sources",
    "summary_lines": "summary",
})

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
