"""The four formats: a terminal table within 100 columns, markdown for a job summary, the JSON
contract (every key documented in docs/report.md, read back as a baseline), JUnit that
xml.etree and a JUnit consumer (junitparser) parse."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from agent_evals.report import build_report, compare, load_results
from agent_evals.report.command import render
from agent_evals.report.format_json import report_from_json, report_to_json
from agent_evals.report.model import Report
from tests.conftest import PROJECT_ROOT
from tests.report.conftest import write_results
from tests.report.scenario import scenario_rows
from tests.report.test_compare import _runs


def _report(tmp_path: Path, rows: list[dict[str, Any]] | None = None, name: str = "r") -> Report:
    path = write_results(
        tmp_path, rows if rows is not None else scenario_rows(), f"{name}.json", eval_id=f"eval-{name}"
    )
    loaded = load_results([str(path)])
    return build_report(loaded.evals, loaded.runs, loaded.rows)


def test_terminal_fits_100_columns_and_says_what_matters(tmp_path: Path) -> None:
    report = _report(tmp_path)
    text = render(report, compare(report, _report(tmp_path, _runs("C01", "ppp"), "base")), "terminal")
    assert max(len(line) for line in text.splitlines()) <= 100
    assert text.splitlines()[0] == (
        "4 case(s), 16 run(s): 8 passed, 5 failed, 3 error(s); 1 flaky; pass^k (k=runs) 0.50"
    )
    assert "INCOMPLETE: 3 error row(s) (system 2, model 1)" in text
    assert re.search(r"^C01 +copy +smoke +4 +2 +2 +0 +0\.00 +FLAKY", text, re.M)
    assert "/addressSpace/0 wrong in 2 case(s) (C01, C03; 4 failed run(s)) by input_diff" in text
    assert "errors by kind (not failures): model 1, system 2" in text
    assert "regressions (1): C01 pass→flaky" in text


def test_markdown_is_a_job_summary(tmp_path: Path) -> None:
    report = _report(tmp_path)
    text = render(report, compare(report, _report(tmp_path, _runs("C01", "ppp"), "base")), "markdown")
    assert text.startswith("## ❌ Agent evals\n")
    assert "| `C01` | FLAKY | 4 | 2 | 2 | 0 | 0.00 | tool_sequence in_order:" in text
    assert "- `/addressSpace/0` wrong in 2 case(s) (C01, C03; 4 failed run(s)) by input_diff" in text
    assert "- **Regressions** (1): `C01` pass → flaky" in text
    assert "**Incomplete:**\n- 3 error row(s) (system 2, model 1)" in text
    assert text.count("<details>") == text.count("</details>") == 5  # the simulated users' too
    clean = render(_report(tmp_path, _runs("C01", "ppp"), "clean"), None, "markdown")
    assert clean.startswith("## ✅ Agent evals\n") and "did not pass" not in clean


def test_a_pipe_in_a_reason_does_not_break_the_table(tmp_path: Path) -> None:
    rows = _runs("C01", "f")
    rows[0]["gradingResult"]["componentResults"][-1]["reason"] = "x: expected a|b"
    assert "x: expected a\\|b" in render(_report(tmp_path, rows), None, "markdown")


def test_json_has_the_contracts_keys(tmp_path: Path) -> None:
    data = json.loads(render(_report(tmp_path), None, "json"))
    assert data["format"] == "agent-evals/report@1"
    assert {"complete", "cases", "groups", "metrics", "usage"} <= set(data)
    case = data["cases"][0]
    assert {
        "id",
        "group",
        "priority",
        "provider",
        "runs",
        "passed",
        "failed",
        "errors",
        "pass_hat_k",
        "k",
        "flaky",
        "ends",
        "first_failure",
    } <= set(case)
    assert case["ends"] == {
        "done": 3,
        "gave_up": 0,
        "max_turns": 1,
        "max_tool_rounds": 0,
        "max_tokens": 0,
        "error": 0,
    }
    assert set(data["usage"]) == {"agent", "user", "judge"}


def _keys(value: Any, prefix: str = "") -> set[str]:
    keys: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key in (
                "ends",
                "errors_by_kind",
                "error_kinds",
                "counts",
            ):  # maps of a vocabulary, documented as such
                keys.add(key)
                continue
            keys.add(key)
            keys |= _keys(item)
    elif isinstance(value, list):
        for item in value:
            keys |= _keys(item)
    return keys


def test_every_json_key_is_documented(tmp_path: Path) -> None:
    report = _report(tmp_path)
    data = report_to_json(report, compare(report, _report(tmp_path, _runs("C01", "ppp"), "base")))
    docs = (PROJECT_ROOT / "docs" / "report.md").read_text()
    missing = sorted(key for key in _keys(data) if f"`{key}`" not in docs)
    assert missing == []


def test_json_reads_back_as_the_same_report(tmp_path: Path) -> None:
    report = _report(tmp_path)
    again = report_from_json(json.loads(json.dumps(report_to_json(report))), "baseline.json")
    assert again == report


def test_junit_parses_and_carries_the_verdicts(tmp_path: Path) -> None:
    text = render(_report(tmp_path), None, "junit")
    root = ET.fromstring(text.encode())
    assert root.tag == "testsuites" and (root.get("tests"), root.get("failures"), root.get("errors")) == (
        "4",
        "2",
        "1",
    )
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert list(cases) == ["C01 [spoke]", "C02 [spoke]", "C03 [spoke]", "C04 [spoke]"]
    props = {p.get("name"): p.get("value") for p in cases["C01 [spoke]"].find("properties")}  # type: ignore[union-attr]
    assert (props["flaky"], props["pass_hat_k"], props["k"], props["runs"], props["verdict"]) == (
        "true",
        "0.0000",
        "4",
        "4",
        "flaky",
    )
    failure = cases["C01 [spoke]"].find("failure")
    assert failure is not None and failure.get("type") == "flaky"
    assert failure.get("message", "").startswith("flaky: 2 of 4 graded run(s) failed; tool_sequence in_order")
    assert "/addressSpace/0" in (failure.text or "")
    assert cases["C02 [spoke]"].find("failure") is None and cases["C02 [spoke]"].find("error") is None
    assert cases["C03 [spoke]"].find("failure") is not None  # failures win over its error
    error = cases["C04 [spoke]"].find("error")
    assert (
        error is not None
        and error.get("type") == "system"
        and error.get("message") == "[system] the portal is not reachable"
    )


def test_junit_reads_in_a_junit_consumer(tmp_path: Path) -> None:
    import junitparser  # a dev dependency: the JUnit consumer
    path = tmp_path / "junit.xml"
    path.write_text(render(_report(tmp_path), None, "junit"))
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
    results = {case.name: [type(r).__name__ for r in case.result] for suite in suites for case in suite}
    assert results == {
        "C01 [spoke]": ["Failure"],
        "C02 [spoke]": [],
        "C03 [spoke]": ["Failure"],
        "C04 [spoke]": ["Error"],
    }
    assert sum(suite.tests for suite in suites) == 4


def test_junit_survives_control_characters(tmp_path: Path) -> None:
    rows = _runs("C01", "f")
    rows[0]["gradingResult"]["componentResults"][-1]["reason"] = "bad \x00 byte \x1b[31m"
    ET.fromstring(render(_report(tmp_path, rows), None, "junit").encode())
