"""What ``agent-evals run`` prints: one line per finished case, no noise, a summary per suite.

Promptfoo's output is read line by line. The kit's hook (``hooks/kit.js``) prints each
finished case as ``@@agent-evals {json}``; those become ``  C01  PASS   12.3s`` lines with
the first failing reason. Promptfoo's table (unless ``--table``), its hints that lead to a
hosted service or an empty viewer, its per-suite summary (the runner prints its own) and the
Python workers' log lines are left out of the terminal; every line goes to the suite's log
in the run's folder, kept when the run was not clean. Anything else (Promptfoo's own errors)
is shown as it came. The output is the same in a terminal and in a CI log.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import IO

from agent_evals.record.row_labels import CASE_LINE_MARKER
from agent_evals.report.figures import brief

REASON_WIDTH = 160
_DROP = (
    re.compile(r"^\s*» (View results|Share with your team|Feedback|Resume with)"),
    re.compile(r"^Python worker stderr:"),
    re.compile(r"^\s*[┌├└│]"),  # the results table
    re.compile(r"^(Starting evaluation|Running \d+ test cases?|Cache is disabled|Evaluating\b)"),
    re.compile(r"^\s*(Results:|✓ \d+ passed|\d+ passed|\d+ failed|✗ \d+ failed|\d+ errors?|✗ \d+ errors?)"),
    re.compile(r"^(Duration:|Total Tokens:|\s+Provider: |\s+Eval: |\s+Grading: |Token usage:)"),
    re.compile(r"^(✓ Eval complete|⏸ Evaluation paused|Writing output to|Creating cache folder at )"),
    re.compile(r"^=+$"),
    re.compile(r"^(There were some errors during the operation|Error log: |Debug log: )"),
    re.compile(r"^\s*$"),
    re.compile(r"^\[(OtlpReceiver|EvaluatorTracing|OtelSdk|TraceStore)\]"),  # Promptfoo's tracing chatter
    re.compile(r"^\[(Evaluation|CI Progress)\] "),  # Promptfoo's progress when CI is set: the kit prints its own
)
# Promptfoo's warnings that are printed with their context as a JSON block on the next lines: left
# out with it. Suites side by side share the results database, so the one that closes first may find
# its WAL checkpoint busy; the other checkpoints it later, nothing is lost.
_DROP_WITH_CONTEXT = re.compile(r"^(WAL checkpoint incomplete before closing database|Could not checkpoint WAL file)")
_EVAL_LINE = re.compile(r"^(✓ Eval complete|⏸ Evaluation paused)")


@dataclass
class SuiteCounts:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    not_graded: int = 0
    errors_by_kind: dict[str, int] = field(default_factory=dict)
    invalid: int = 0  # the simulated user spoiled the conversation: neither a pass nor a fail
    incomplete: int = 0  # a check that decides the row could not be graded: neither a pass nor a fail

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errors + self.invalid + self.incomplete


class PromptfooConsole:
    """Turns Promptfoo's lines into the runner's (see the module docstring)."""

    def __init__(
        self, log: IO[str] | None = None, *, table: bool = False, show_provider: bool = False,
        show: IO[str] | None = None,
    ) -> None:
        self.log = log
        self.table = table
        self.show_provider = show_provider
        self.counts = SuiteCounts()
        self.quiet = False  # after an interrupt: Promptfoo's shutdown noise is only logged
        self._show = show
        self._context: str | None = None  # a dropped warning's JSON context: "next" line, then "inside"

    def feed(self, line: str) -> None:
        if self.log is not None:
            self.log.write(line + "\n")
            self.log.flush()
        if line.startswith(CASE_LINE_MARKER):
            self._case(line[len(CASE_LINE_MARKER):])
            return
        if self.quiet or self._dropped(line) or self._dropped_context(line):
            return
        self._print(line)

    def _dropped_context(self, line: str) -> bool:
        if _DROP_WITH_CONTEXT.search(line):
            self._context = "next"
            return True
        if self._context == "next" and line.strip() in ("{", "{}"):
            self._context = "inside" if line.strip() == "{" else None
            return True
        if self._context == "inside":
            if line.rstrip() == "}":
                self._context = None
            return True
        self._context = None
        return False

    def _dropped(self, line: str) -> bool:
        if self.table and re.match(r"^\s*[┌├└│]", line):
            return False
        return any(pattern.search(line) for pattern in _DROP)

    def _case(self, payload: str) -> None:
        try:
            case = json.loads(payload)
        except ValueError:
            return
        status = str(case.get("status") or "?")
        if status == "PASS":
            self.counts.passed += 1
        elif status == "FAIL":
            self.counts.failed += 1
        elif status == "INVALID":
            self.counts.invalid += 1
        elif status == "INCOMPLETE":
            self.counts.incomplete += 1
        else:
            self.counts.errors += 1
            kind = str(case.get("error_kind") or "other")
            self.counts.errors_by_kind[kind] = self.counts.errors_by_kind.get(kind, 0) + 1
        self.counts.not_graded += int(case.get("not_graded") or 0)
        self._print(case_line(case, show_provider=self.show_provider))

    def _print(self, text: str) -> None:
        print(text, flush=True, file=self._show)


def case_line(case: dict, *, show_provider: bool = False) -> str:
    """``  C01   PASS    12.3s``, with the first failing reason for a failure or error."""
    seconds = float(case.get("latency_ms") or 0) / 1000
    line = f"  {str(case.get('id') or '?'):<6} {str(case.get('status') or '?'):<5} {seconds:>6.1f}s"
    if show_provider and case.get("provider"):
        line += f"  [{case['provider']}]"
    reason = str(case.get("reason") or "")
    if reason:
        line += "  " + brief(reason, REASON_WIDTH)  # as every report format shows a first failure
    if case.get("not_graded"):
        line += f"  ({case['not_graded']} not graded)"
    return line


def suite_summary(name: str, counts: SuiteCounts, seconds: float, eval_id: str | None) -> str:
    parts = [f"{counts.passed} passed", f"{counts.failed} failed", f"{counts.errors} error(s)"]
    if counts.errors_by_kind:
        parts[-1] += " (" + ", ".join(f"{k} {v}" for k, v in sorted(counts.errors_by_kind.items())) + ")"
    if counts.invalid:
        parts.append(f"{counts.invalid} invalid (the simulated user spoiled the conversation; neither pass nor fail)")
    if counts.incomplete:
        parts.append(f"{counts.incomplete} incomplete (a deciding check was not graded)")
    if counts.not_graded:
        parts.append(f"{counts.not_graded} check(s) not graded")
    where = f"; eval {eval_id}" if eval_id else ""
    return f"{name}: {', '.join(parts)} in {seconds:.0f} s{where}"
