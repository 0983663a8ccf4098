"""``agent-evals baseline bless``: a baseline with its record (date, revision, agent, models, runs),
several results adding up, bad input refused in one line, and the gate saying when a blessed
baseline is stale."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_evals.cli import main
from agent_evals.report import check_gate, compare, parse_gate
from agent_evals.report.command import load_baseline, load_report
from tests.report.conftest import write_results
from tests.report.test_compare import _runs


def test_bless_two_runs_into_one_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = write_results(tmp_path, _runs("C01", "ppp") + _runs("C02", "p", start=3), "a.json", eval_id="eval-a")
    second = write_results(tmp_path, _runs("C01", "pp") + _runs("C02", "p", start=3), "b.json", eval_id="eval-b")
    out = tmp_path / "evals" / "baseline.json"
    assert main(["baseline", "bless", str(first), str(second), "-o", str(out)]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[0] == (
        f"baseline blessed: 2 case(s), at least 2 graded run(s) each; agent agent (agent-model); suite ?; rev ? → {out}"
    )
    assert said[1] == (
        "WARN 1 case(s) have fewer than 3 graded runs (C02 2): against them no regression can be shown (run with "
        "--repeat 3 or more, or bless several runs together)"
    )
    data = json.loads(out.read_text())
    blessed = data["blessed"]
    assert blessed["runs_per_case"] == 2 and blessed["agents"] == ["agent"] and blessed["models"] == ["agent-model"]
    assert blessed["eval_ids"] == ["eval-a", "eval-b"] and blessed["blessed_at"].endswith("Z")
    assert [c["runs"] for c in data["cases"]] == [5, 2]  # the runs of both results, per case

    baseline = load_baseline(str(out))
    assert baseline.blessed is not None and baseline.blessed.runs_per_case == 2
    now = load_report([str(write_results(tmp_path, _runs("C01", "ppp"), "now.json", eval_id="eval-now"))])
    comparison = compare(now, baseline)
    assert comparison.baseline_blessed == baseline.blessed
    gate = parse_gate({"no_significant_regression": ["all"]})
    fresh = check_gate(gate, now, comparison)
    assert not any(rule.status == "warning" for rule in fresh.rules)
    later = check_gate(gate, now, comparison, now=datetime.now(UTC).replace(year=datetime.now(UTC).year + 1))
    (stale,) = later.of("warning")
    assert stale.line.startswith(f"blessed {baseline.blessed.blessed_at[:10]}, 36") and stale.line.endswith(
        "days ago: older than baseline_max_age_days 30; bless a new one (agent-evals baseline bless)"
    )


def test_a_baseline_of_errors_only_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    errors = write_results(tmp_path, _runs("C01", "ee") + _runs("C02", "e", start=2), "errors.json")
    out = tmp_path / "baseline.json"
    assert main(["baseline", "bless", str(errors), "-o", str(out)]) == 2
    assert capsys.readouterr().err == (
        "baseline bless: every run of the 2 case(s) errored: no graded run to compare with (fix the errors, then "
        "bless a run)\n"
    )
    assert not out.exists()
    assert main(["baseline", "bless", str(tmp_path / "missing.json"), "-o", str(out)]) == 2
    assert capsys.readouterr().err.startswith("baseline bless: ") and not out.exists()
