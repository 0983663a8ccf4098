"""The two ways the gate misled, as a release manager met them (issue #27, item 0).

1. A baseline is saved, C05 (a ``full`` case) breaks, the run has ``--repeat 3``: the report
   says ``regressions (1): C05 pass→fail`` while the project's gate (``no_regressions: [smoke]``)
   said ``gate holds`` and never named C05. Now the gate names it.
2. ``./evals.sh && npm run gate``: an offline replay (the models as recorded, judged checks not
   graded) held the gate without a word about either. Now the gate cannot decide (exit 2) and
   says why, unless the gate file allows it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_evals.cli import main
from tests.conftest import PROJECT_ROOT
from tests.report.conftest import write_results
from tests.report.test_compare import _runs

GATE = PROJECT_ROOT / "evals" / "gate.yaml"
TODAY = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")  # a fresh baseline: not stale


def _replayed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for row in rows:
        row["response"]["metadata"]["replay"] = {"cassette": f"{row['testCase']['metadata']['id']}.json"}
    return rows


def test_a_regression_the_report_names_is_named_by_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = write_results(
        tmp_path, _runs("C01", "ppp") + _runs("C05", "ppp", start=3, priority="full"), "baseline.json",
        eval_id="eval-base", created_at=TODAY,
    )
    broken = write_results(
        tmp_path, _runs("C01", "ppp") + _runs("C05", "fff", start=3, priority="full"), "now.json", eval_id="eval-now"
    )
    assert main(["report", str(broken), "--baseline", str(baseline)]) == 0
    assert "  regressions (1): C05 pass→fail" in capsys.readouterr().out

    # the gate of the issue (no_regressions: [smoke] only) said "gate holds" without a word of C05
    smoke_only = tmp_path / "smoke-only.yaml"
    smoke_only.write_text("max_flaky: 0\nmin_pass_hat_k: {priority: {smoke: 1.0}}\nno_regressions: [smoke]\n")
    code = main(["gate", "--gate", str(smoke_only), "--baseline", str(baseline), str(broken)])
    lines = capsys.readouterr().out.splitlines()
    assert "ok     no_regressions (priority smoke): no case that passed in the baseline fails or is flaky now" in lines
    assert lines[-2:] == [
        "WARN   uncovered regressions: 1 regression(s) against the baseline that no rule covers: "
        "C05 pass→fail (priority full); to gate them, add full (or all) to no_regressions",
        "gate holds: 5 rule(s) checked; 1 warning(s)",
    ] and code == 0

    # the project's gate covers every case with no_significant_regression: 3 runs a side cannot make
    # one case's pass→fail significant across the family, and the rule says so, naming C05
    assert main(["gate", "--gate", str(GATE), "--baseline", str(baseline), str(broken)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (
        "ok     no_significant_regression (every case): no significant regression (α 0.05 family-wise over 2 "
        "case(s) and their pooled runs (2 could reach it: p ≤ 0.025)); not significant: "
        "C05 pass→fail 3/3 → 0/3 p=0.05 (likely regression)"
    ) in lines
    assert not any(line.startswith("WARN") for line in lines)

    every = tmp_path / "every.yaml"
    every.write_text("no_regressions: [all]\n")
    assert main(["gate", "--gate", str(every), "--baseline", str(baseline), str(broken)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert "BROKEN no_regressions (every case): 1 regression(s) against the baseline: C05 pass→fail" in lines
    assert not any(line.startswith("WARN") for line in lines)


def test_a_replay_with_checks_not_graded_cannot_hold_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judged = "expected_statements (statements): the case's cassette holds no judge replies"
    rows = _replayed(_runs("C01", "p") + _runs("Q01", "p", start=1, not_graded=[judged]))
    results = str(write_results(tmp_path, rows, "replay.json", eval_id="eval-replay"))
    assert main(["gate", "--gate", str(GATE), results]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "CANNOT replay: 1 of 1 eval(s) replayed recorded model answers (eval-replay): a replay shows that the "
        "suites, tools and checks work, not what the agent does now; run the agent live, or set "
        "allow_replay: true in the gate file"
    )
    assert lines[1] == (
        "CANNOT not_graded: 1 deciding check(s) were not graded in 1 case(s) (Q01 1): their rows passed without "
        "them; configure the judge model (JUDGE_MODEL), or set allow_not_graded: true in the gate file"
    )
    assert lines[-1] == "gate cannot decide: replay, not_graded (exit 2)"

    allowed = tmp_path / "allowed.yaml"
    allowed.write_text(GATE.read_text() + "allow_replay: true\nallow_not_graded: true\n")
    assert main(["gate", "--gate", str(allowed), results]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("ok     allow_replay: 1 of 1 eval(s) replayed") and lines[0].endswith(
        "; allowed by the gate file")
    assert lines[-1] == "gate holds: 6 rule(s) checked"


def test_a_broken_rule_outweighs_cannot_decide(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = str(write_results(tmp_path, _replayed(_runs("C01", "pf")), "replay.json", eval_id="eval-replay"))
    assert main(["gate", "--gate", str(GATE), results]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "gate broken: 2 of 5 rule(s)"


def test_an_informative_check_not_graded_decides_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    informative = "goal_reached (no metric): no judge model is configured (informative, weight 0)"
    results = str(write_results(tmp_path, _runs("C01", "pp", not_graded=[informative]), eval_id="eval-live"))
    assert main(["gate", "--gate", str(GATE), results]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "gate holds: 4 rule(s) checked"
