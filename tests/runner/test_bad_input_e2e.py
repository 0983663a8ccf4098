"""Bad input through the real runner and Promptfoo: what the check would have said is, without the check,
an error of kind ``config`` on the row, before the conversation, and the report counts it as an error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_evals.report import build_report, check_gate, load_gate, load_results
from tests.conftest import PROJECT_ROOT, clean_env
from tests.project_copy import copy_project

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)


def _env(home: Path) -> dict[str, str]:
    env = {**clean_env(), "AGENT_EVALS_HOME": str(home), "PROMPTFOO_CONFIG_DIR": str(home / "promptfoo")}
    env.pop("AGENT_EVALS_DATA_DIR", None)
    return env


def test_config_errors_and_failures_in_one_run_each_shown_as_what_they_are(tmp_path: Path) -> None:
    """Without the check (``--no-check``): C02 names a check file that does not exist and C03 a misspelled
    assertion type, each an error of kind config before its conversation, not a failure; C01 fails two
    checks (a tool left out, then a wrong argument) and C18 expects a PR it never gets: the terminal
    and every report format show the same first failure with its diagnosis."""
    home = copy_project(tmp_path, ("spoke-create",))
    copies = home / "evals" / "spoke-create" / "cases" / "1-copy.yaml"
    text = copies.read_text()
    c02, c03 = text.index("- description: C02"), text.index("- description: C03")
    c01 = text[:c02].replace("      - get_spoke\n      - validate_spoke_config\n",
                             "      - get_spoke\n      - get_spoke_schema\n      - validate_spoke_config\n", 1)
    c01 = c01.replace("        source_spoke: crm-dev-neu\n", "        source_spoke: crm-dev-sdc\n", 1)
    copies.write_text(c01 + text[c02:c03].replace("assertions/spoke_json_valid.py", "assertions/no_such_check.py", 1)
                      + text[c03:].replace("- type: python\n", "- type: pythonn\n", 1))
    blocked = home / "evals" / "spoke-create" / "cases" / "4-blocked.yaml"
    blocked.write_text(blocked.read_text().replace("metric: pull_request, config: {expect: none}}",
                                                   "metric: pull_request}", 1))
    out = tmp_path / "results.json"

    done = subprocess.run([sys.executable, "-m", "agent_evals.cli", "run", "spoke-create", "--replay", "--no-check",
                           "--filter-pattern", "^C(01|02|03|18) ", "-o", str(out)], env=_env(home), cwd=home,
                          capture_output=True, text=True, timeout=300)

    assert done.returncode == 100, done.stdout[-3000:] + done.stderr[-3000:]
    rows = {r["testCase"]["metadata"]["id"]: r for r in json.loads(out.read_text())["results"]["results"]}
    for case, what in (("C02", "file://../../assertions/no_such_check.py names no file"),
                       ("C03", "unknown assertion type 'pythonn'; did you mean python?")):
        row = rows[case]
        assert row["failureReason"] == 2, row.get("error")  # an error, not a failure
        assert row["error"].startswith("[config] ") and what in row["error"], row["error"]
        assert "Traceback" not in row["error"]
        assert row["response"]["metadata"]["tool_calls"] == []  # nothing was spent on the conversation
        assert f"  {case}    ERROR" in done.stdout
    (manifest,) = [json.loads(p.read_text()) for p in (home / "data" / "runs").glob("run-*/run.json")]
    assert [s["selected"] for s in manifest["suites"]] == [["C01", "C02", "C03", "C18"]]  # known without the check
    loaded = load_results([str(out)])
    report = build_report(loaded.evals, loaded.runs, loaded.rows)
    assert report.totals.errors == 2 and report.totals.failed == 2
    assert dict(report.errors_by_kind) == {"config": 2}
    assert not report.complete
    verdict = check_gate(load_gate(PROJECT_ROOT / "evals" / "gate.yaml"), report)
    assert not verdict.holds

    (line,) = [text for text in done.stdout.splitlines() if text.startswith("  C01 ")]
    assert "; missing get_spoke_schema after get_spoke" in line, line  # the diagnosis (was cut at 160: "…cre…")
    assert line.split("FAIL", 1)[1].split("s  ", 1)[1].startswith("tool_sequence in_order: expected get_spoke")
    formats = {}
    for name in ("terminal", "markdown", "json", "junit"):
        shown = subprocess.run([sys.executable, "-m", "agent_evals.cli", "report", str(out), "--format", name],
                               env=_env(home), cwd=home, capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0, shown.stdout + shown.stderr
        formats[name] = shown.stdout
    cases = {c["id"]: c for c in json.loads(formats["json"])["cases"]}
    assert cases["C01"]["first_failure"].startswith("tool_sequence in_order: expected get_spoke → get_spoke_schema")
    assert "missing get_spoke_schema after get_spoke" in formats["markdown"]
    assert "missing get_spoke_schema after get_spoke" in " ".join(formats["terminal"].split())
    assert "tool_sequence in_order" in formats["junit"] and "argument_match" not in formats["junit"].split(
        "C01")[1].split("</testcase>")[0].split("failure message=")[1][:60]
    # the markdown keeps <id> of the PR URL pattern (an HTML tag to a markdown renderer, unless escaped)
    assert "/repos/spokes/pullrequest/&lt;id&gt;" in formats["markdown"]
    assert "/repos/spokes/pullrequest/<id>" in cases["C18"]["first_failure"]


@pytest.mark.parametrize("command", [["check", "spoke-create", "--offline"], ["run", "spoke-create", "--replay"]])
def test_a_byte_that_is_not_utf8_stops_check_and_run_with_one_line(tmp_path: Path, command: list[str]) -> None:
    home = copy_project(tmp_path, ("spoke-create",))
    case = home / "evals" / "spoke-create" / "cases" / "3-new.yaml"
    case.write_bytes(case.read_bytes().replace(b"brand-new", b"brand\xe9new", 1))
    line = next(i for i, text in enumerate(case.read_bytes().splitlines(), 1) if b"brand\xe9new" in text)

    done = subprocess.run([sys.executable, "-m", "agent_evals.cli", *command], env=_env(home), cwd=home,
                          capture_output=True, text=True, timeout=120)

    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    problems = [text for text in done.stdout.splitlines() if text.startswith("  ")]
    assert len(problems) == 1, done.stdout
    assert problems[0].startswith(f"  evals/spoke-create/cases/3-new.yaml:{line}: not UTF-8: byte(s) e9 at column ")
    assert done.stdout.splitlines()[-1] == "check: 1 problem(s); nothing was run"
