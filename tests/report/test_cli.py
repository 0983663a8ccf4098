"""``agent-evals report`` and ``agent-evals gate`` on the command line: formats, -o, exit
statuses, and bad input as one line with exit 2 and no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_evals.cli import main
from tests.conftest import PROJECT_ROOT
from tests.report.conftest import write_results
from tests.report.scenario import scenario_rows
from tests.report.test_compare import _runs


def test_report_formats_and_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = str(write_results(tmp_path, scenario_rows()))
    assert main(["report", results]) == 0
    assert capsys.readouterr().out.startswith("4 case(s), 16 run(s)")
    for fmt, start in (("markdown", "## ❌ Agent evals"), ("junit", "<?xml"), ("json", "{")):
        out = tmp_path / "out" / f"report.{fmt}"
        assert main(["report", results, "--format", fmt, "-o", str(out)]) == 0
        assert out.read_text().startswith(start)
    assert json.loads((tmp_path / "out" / "report.json").read_text())["k"] is None
    assert main(["report", results, "--k", "2", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["k"] == 2


def test_gate_exit_statuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clean = str(write_results(tmp_path, _runs("C01", "ppp"), "clean.json", eval_id="eval-clean"))
    flaky = str(write_results(tmp_path, _runs("C01", "pfp"), "flaky.json", eval_id="eval-flaky"))
    gate = PROJECT_ROOT / "evals" / "gate.yaml"
    assert main(["gate", "--gate", str(gate), clean]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "gate holds: 4 rule(s) checked"
    assert main(["gate", "--gate", str(gate), "--baseline", clean, flaky]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines if line.startswith("BROKEN")] == [
        "BROKEN max_flaky",
        "BROKEN min_pass_hat_k priority smoke",
        "BROKEN no_regressions (priority smoke)",
    ]
    assert main(["gate", clean]) == 0  # the project's evals/gate.yaml by default


def _bad_inputs(tmp_path: Path) -> list[tuple[list[str], str]]:
    results = str(write_results(tmp_path, _runs("C01", "pp")))
    other = str(write_results(tmp_path, _runs("Q01", "pp"), "other.json", eval_id="eval-other"))
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"tests": []}')
    bad_gate = tmp_path / "gate.yaml"
    bad_gate.write_text("max_flaky: 0\nmin_pass_hat_k: {all: 2}\n")
    typo_gate = tmp_path / "typo.yaml"
    typo_gate.write_text("max_flakey: 0\n")
    empty = str(write_results(tmp_path, [], "empty.json", eval_id="eval-empty"))
    return [
        (
            ["report", str(foreign)],
            f"report: {foreign}: not a Promptfoo results file (-o JSON): no results.results list",
        ),
        (["report", "eval-nope"], "report: no Promptfoo results database at "),
        (["report", str(tmp_path / "missing.json")], f"report: {tmp_path / 'missing.json'}: no such file"),
        (
            ["report", results, "--baseline", other],
            "report: the baseline has no case in common with the current results",
        ),
        (["report", results, "-o", "/proc/nope/x.md"], "report: cannot write /proc/nope/x.md"),
        (
            ["gate", "--gate", str(bad_gate), results],
            f"gate: cannot decide: {bad_gate}: min_pass_hat_k.all is 2;",
        ),
        (
            ["gate", "--gate", str(typo_gate), results],
            f"gate: cannot decide: {typo_gate}: unknown key 'max_flakey'",
        ),
        (["gate", "--gate", str(tmp_path / "none.yaml"), results], "gate: cannot decide: "),
        (["gate", str(foreign)], "gate: cannot decide: "),
        (["gate", empty], "gate: cannot decide: the results hold no case: nothing to judge"),
    ]


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, start in _bad_inputs(tmp_path):
        assert main(argv) == 2, argv
        captured = capsys.readouterr()
        assert captured.err.startswith(start), (argv, captured.err)
        assert captured.err.count("\n") == 1 and captured.out == "", argv


def test_no_traceback_from_the_command(tmp_path: Path) -> None:
    for argv, _ in _bad_inputs(tmp_path)[:4]:
        done = subprocess.run(
            [sys.executable, "-m", "agent_evals.cli", *argv], capture_output=True, text=True
        )
        assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    "argv", [["report", "--k", "0"], ["report", "--format", "html"], ["report", "--k", "x"]]
)
def test_bad_options_are_refused_by_the_parser(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
