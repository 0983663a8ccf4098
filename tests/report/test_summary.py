"""The short form for the end of ``agent-evals run``: a few lines, never an exception."""

from __future__ import annotations

from pathlib import Path

from agent_evals.report import summary_lines
from agent_evals.suites.manifest import RunManifest, SuiteRun
from tests.report.conftest import import_results, needs_promptfoo, write_results
from tests.report.scenario import scenario_rows
from tests.report.test_compare import _runs


def test_summary_of_files(tmp_path: Path) -> None:
    path = str(write_results(tmp_path, scenario_rows()))
    assert summary_lines([path]) == [
        "report: 4 case(s), 16 run(s): 8 passed, 5 failed, 3 error(s); pass^k (k=runs) 0.50",
        "flaky: 1 (C01); failing every run: 1 (C03)",
        "errors by kind: model 1, system 2",
        "INCOMPLETE: 3 error row(s) (system 2, model 1)",
        f"whole report: npm run report -- {path}",  # absolute: the shell is not at the project's root
    ]


def test_summary_of_a_clean_run_with_not_graded_checks(tmp_path: Path) -> None:
    rows = _runs("Q01", "pp", not_graded=["llm-rubric (rubric): no grader model"])
    path = str(write_results(tmp_path, rows))
    assert summary_lines([path])[1:3] == ["not graded: 2 check(s) (left out of the scores)", "complete"]


@needs_promptfoo
def test_summary_of_a_manifest(tmp_path: Path, config_dir: Path) -> None:
    import_results(config_dir, write_results(tmp_path, _runs("C01", "pp"), eval_id="eval-m1"))
    suites = [SuiteRun("spoke-create", "eval-m1", ["C01", "C02"], repeat=2)]
    manifest = RunManifest("run-abc", "replay", suites=suites, finished_at="2026-01-01T00:00:00Z")
    assert summary_lines(manifest) == [  # the manifest need not be saved
        "report: 1 case(s), 2 run(s): 2 passed, 0 failed, 0 error(s); pass^k (k=runs) 1.00",
        "INCOMPLETE: eval eval-m1 (spoke-create): 1 selected case(s) ran fewer than 2 time(s): C02 0/2",
        "whole report: npm run report -- run-abc",
    ]
    unfinished = RunManifest("run-abc", "replay", suites=suites)  # called before the run recorded its end
    assert summary_lines(unfinished)[1].startswith("INCOMPLETE: run run-abc is still running; ")


def test_summary_never_raises(tmp_path: Path) -> None:
    assert summary_lines(["eval-nope"]) == [
        f"report: no Promptfoo results database at {tmp_path / 'promptfoo' / 'promptfoo.db'}: "
        "run a suite first, or set PROMPTFOO_CONFIG_DIR"
    ]
