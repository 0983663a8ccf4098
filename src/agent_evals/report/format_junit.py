"""The report as JUnit XML: one ``<testcase>`` per case (all its runs), one ``<testsuite>`` per suite.

A case that failed any graded run (failing or flaky) has a ``<failure>`` whose text lists
each failed run's first failing check; a case with errors and no failed run has an ``<error>`` of its
error kind; a case with no graded run and no error (every run invalid, or incomplete) is
``<skipped>``, saying why: it is neither a pass nor a fail. Each testcase carries ``runs``, ``passed``, ``failed``, ``errors``,
``pass_hat_k``, ``k``, ``flaky``, ``verdict``, ``group``, ``priority`` and ``provider`` as
properties; each testsuite, whether the run is complete.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from agent_evals.report.model import CaseSummary, Report

UNKNOWN_SUITE = "agent-evals"
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def render_junit(report: Report) -> str:
    root = ET.Element("testsuites", _counts("agent-evals", report.cases))
    suites: dict[str, list[CaseSummary]] = {}
    for case in report.cases:
        suites.setdefault(case.suite or UNKNOWN_SUITE, []).append(case)
    for name, cases in suites.items():
        suite = ET.SubElement(root, "testsuite", _counts(name, cases))
        _properties(
            suite,
            {
                "complete": report.complete,
                "k": report.k or "runs",
                "incomplete": "; ".join(report.incomplete),
            },
        )
        for case in cases:
            _testcase(suite, name, case)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _counts(name: str, cases: Sequence[CaseSummary]) -> dict[str, str]:
    return {
        "name": name,
        "tests": str(len(cases)),
        "failures": str(sum(1 for c in cases if c.failed)),
        "errors": str(sum(1 for c in cases if not c.failed and c.errors)),
        "skipped": str(sum(1 for c in cases if _skipped(c))),
    }


def _testcase(suite: ET.Element, suite_name: str, case: CaseSummary) -> None:
    classname = f"{suite_name}.{case.group}" if case.group else suite_name
    name = case.id if case.provider in ("", UNKNOWN_SUITE) else f"{case.id} [{case.provider}]"
    element = ET.SubElement(suite, "testcase", {"classname": _clean(classname), "name": _clean(name)})
    _properties(
        element,
        {
            "runs": case.runs,
            "passed": case.passed,
            "failed": case.failed,
            "errors": case.errors,
            "pass_hat_k": "" if case.pass_hat_k is None else f"{case.pass_hat_k:.4f}",
            "k": case.k or "",
            "flaky": case.flaky,
            "verdict": case.verdict,
            "group": case.group or "",
            "priority": case.priority or "",
            "provider": case.provider,
            "not_graded": case.not_graded,
            "invalid": case.invalid,
            "incomplete": case.incomplete,
            "attempts": case.attempts,
        },
    )
    if case.failed:
        what = "flaky" if case.flaky else "failed"
        message = (
            f"{what}: {case.failed} of {case.passed + case.failed} graded run(s) failed; {case.first_failure}"
        )
        failure = ET.SubElement(element, "failure", {"message": _clean(_first_line(message)), "type": what})
        failure.text = _clean(
            "\n\n".join(f"run {f.test_idx} of {f.eval_id} [{f.metric}]:\n{f.reason}" for f in case.failures)
            + (f"\n\nand {case.errors} error run(s): {case.first_error}" if case.errors else "")
        )
    elif _skipped(case):  # no graded run, and no error: the user spoiled it, or a deciding check was not graded
        why = ("the simulated user spoiled every run (invalid)" if case.verdict == "invalid"
               else "a check that decides the run could not be graded (incomplete)")
        ET.SubElement(element, "skipped", {"message": _clean(f"{why}: {case.first_error or ''}".rstrip(": "))})
    elif case.errors:
        kind = next(iter(case.error_kinds), "unknown")
        error = ET.SubElement(element, "error", {"message": _clean(case.first_error or ""), "type": kind})
        error.text = _clean(
            f"{case.errors} error run(s) of {case.runs}: "
            + ", ".join(f"{k} {n}" for k, n in case.error_kinds.items())
        )
    ends = ", ".join(f"{end} {n}" for end, n in case.ends.items())
    spoiled = f"\ninvalid (the simulated user spoiled it, neither pass nor fail): {case.invalid}" if case.invalid else ""
    ET.SubElement(element, "system-out").text = _clean(f"ends: {ends}{spoiled}")


def _skipped(case: CaseSummary) -> bool:
    return case.verdict in ("invalid", "incomplete")


def _properties(parent: ET.Element, values: dict[str, object]) -> None:
    properties = ET.SubElement(parent, "properties")
    for key, value in values.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        ET.SubElement(properties, "property", {"name": key, "value": _clean(text)})


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


def _clean(text: str) -> str:
    """Without the characters XML 1.0 cannot hold (control characters in a reason)."""
    return _NOT_XML.sub("\ufffd", text)
