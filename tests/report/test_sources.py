"""Reading results: a real Promptfoo database (written by ``promptfoo import``) gives the same
report as the ``-o`` file; ``latest``; run manifests (a run of several suites, completeness,
labels); unknown ids and missing databases are one-line errors."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from agent_evals.report import ReportInputError, build_report, load_results
from agent_evals.report.format_json import report_to_json
from agent_evals.suites.manifest import SuiteRun
from agent_evals.testing.promptfoo_results import result_row
from tests.report.conftest import import_results, needs_promptfoo, write_manifest, write_results
from tests.report.scenario import scenario_rows


def _json(specs: list[str]) -> dict:
    loaded = load_results(specs)
    return report_to_json(build_report(loaded.evals, loaded.runs, loaded.rows))


def _without_sources(data: dict) -> dict:
    return {**data, "evals": [{**e, "source": None} for e in data["evals"]]}


@needs_promptfoo
def test_the_database_and_the_file_give_the_same_report(tmp_path: Path, config_dir: Path) -> None:
    path = write_results(tmp_path, scenario_rows(), eval_id="eval-aaa-2026-01-01T00:00:00")
    import_results(config_dir, path)

    from_db = _json(["eval-aaa-2026-01-01T00:00:00"])
    assert from_db["evals"][0]["source"] == "database"
    assert _without_sources(from_db) == _without_sources(_json([str(path)]))
    assert _json(["latest"]) == from_db == _json([])


@needs_promptfoo
def test_latest_is_the_newest_eval_or_the_newest_run(tmp_path: Path, config_dir: Path) -> None:
    old = write_results(
        tmp_path, scenario_rows(), "old.json", eval_id="eval-old", created_at="2026-01-01T00:00:00.000Z"
    )
    create = write_results(
        tmp_path,
        [result_row("C01", 0)],
        "a.json",
        eval_id="eval-create",
        created_at="2026-01-02T00:00:00.000Z",
    )
    qa = write_results(
        tmp_path,
        [result_row("Q01", 0, group="qa")],
        "b.json",
        eval_id="eval-qa",
        created_at="2026-01-02T00:01:00.000Z",
    )
    import_results(config_dir, old, create, qa)
    assert [e["eval_id"] for e in _json(["latest"])["evals"]] == ["eval-qa"]  # no manifest: one eval

    write_manifest(
        "run-0001",
        [
            SuiteRun("spoke-create", "eval-create", ["C01"]),
            SuiteRun("spoke-qa", "eval-qa", ["Q01"]),
        ],
        mode="replay",
        git_revision="abc1234",
        finished_at="2026-01-02T00:02:00Z",
    )
    report = _json(["latest"])
    assert [(e["eval_id"], e["suite"]) for e in report["evals"]] == [
        ("eval-create", "spoke-create"),
        ("eval-qa", "spoke-qa"),
    ]
    assert [c["id"] for c in report["cases"]] == ["C01", "Q01"] and report["complete"]
    assert report["ran"]["modes"] == ["replay"] and report["ran"]["git_revisions"] == ["abc1234"]
    assert _json(["run-0001"]) == report
    assert [c["suite"] for c in report["cases"]] == ["spoke-create", "spoke-qa"]


@needs_promptfoo
def test_a_manifest_says_what_is_missing(tmp_path: Path, config_dir: Path) -> None:
    rows = [result_row("C01", 0), result_row("C01", 1), result_row("C02", 2)]  # C02 once, C03 never
    import_results(config_dir, write_results(tmp_path, rows, eval_id="eval-part"))
    write_manifest(
        "run-0002",
        [
            SuiteRun("spoke-create", "eval-part", ["C01", "C02", "C03"], repeat=2),
            SuiteRun("spoke-qa", None, ["Q01"]),
        ],
        interrupted=True,
        finished_at="2026-01-02T00:02:00Z",
    )

    report = _json(["latest"])
    assert not report["complete"]
    assert report["incomplete"] == [
        "run run-0002 was interrupted",
        "run run-0002: suite(s) spoke-qa did not run",
        "eval eval-part (spoke-create) was interrupted",
        "eval eval-part (spoke-create): 2 selected case(s) ran fewer than 2 time(s): C02 1/2, C03 0/2",
    ]


def test_a_run_whose_process_is_gone_did_not_finish(tmp_path: Path, config_dir: Path) -> None:
    from agent_evals.report.completeness import incompleteness
    from agent_evals.report.model import RunInfo

    assert incompleteness([], [RunInfo("run-x", "live", finished=False)], []) == [
        "no result rows",
        "run run-x did not finish (its process is gone)",
    ]
    assert (
        incompleteness([], [RunInfo("run-y", "live", finished=False, alive=True)], [])[1]
        == "run run-y is still running"
    )


def test_an_interrupted_eval_in_the_database_is_incomplete(tmp_path: Path, config_dir: Path) -> None:
    """Promptfoo leaves ``evals.results`` = {} after Ctrl-C; its in-flight row is "Worker shutting down"."""
    db = config_dir / "promptfoo.db"
    with sqlite3.connect(db) as con:
        con.execute(
            "CREATE TABLE evals (id TEXT PRIMARY KEY, created_at INTEGER, description TEXT, results TEXT, config TEXT)"
        )
        con.execute(
            "CREATE TABLE eval_results (eval_id TEXT, prompt_idx INT, test_idx INT, test_case TEXT, provider TEXT,"
            " response TEXT, error TEXT, success INT, score REAL, grading_result TEXT, named_scores TEXT,"
            " metadata TEXT, failure_reason INT, cost REAL, latency_ms INT)"
        )
        con.execute("INSERT INTO evals VALUES ('eval-int', 1, 'x', '{}', '{}')")
        row = result_row("C01", 0, "error", record=False)
        con.execute(
            "INSERT INTO eval_results VALUES ('eval-int', 0, 0, ?, ?, '{}', 'Worker shutting down', 0, 0, NULL, '{}',"
            " '{}', 2, 0, 0)",
            (json.dumps(row["testCase"]), json.dumps(row["provider"])),
        )
    report = _json(["latest"])
    assert report["incomplete"] == [
        "1 error row(s) (interrupted 1)",
        "eval eval-int did not finish (interrupted or still running)",
    ]


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (["latest"], "no Promptfoo results database at {db}: run a suite first, or set PROMPTFOO_CONFIG_DIR"),
        (["eval-nope"], "no Promptfoo results database at {db}"),
        (["run-nope"], "no run run-nope in {runs}"),
    ],
)
def test_missing_results_are_one_line(specs: list[str], message: str, config_dir: Path) -> None:
    with pytest.raises(ReportInputError) as caught:
        load_results(specs)
    expected = message.format(db=config_dir / "promptfoo.db", runs=config_dir.parent / "data" / "runs")
    assert str(caught.value).startswith(expected) and "\n" not in str(caught.value)


@needs_promptfoo
def test_an_unknown_eval_id_names_the_newest(tmp_path: Path, config_dir: Path) -> None:
    import_results(config_dir, write_results(tmp_path, [result_row("C01", 0)], eval_id="eval-there"))
    with pytest.raises(
        ReportInputError, match=r"no eval eval-typo in .*promptfoo.db \(1 evals; the newest is eval-there\)"
    ):
        load_results(["eval-typo"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"results": {"stats": {}}}', "not a Promptfoo results file (-o JSON): no results.results list"),
        ("[1, 2]", "not a Promptfoo results file (-o JSON)"),
        ("{not json", "not JSON"),
        (
            '{"results": {"results": [{"output": 1}]}}',
            "not a Promptfoo results file (-o JSON): a result row without",
        ),
    ],
)
def test_a_file_that_is_not_promptfoos(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(
        ReportInputError, match=f"^{path}: " + message.replace("(", r"\(").replace(")", r"\)")
    ):
        load_results([str(path)])


def test_a_stored_report_is_not_results(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    loaded = load_results([str(write_results(tmp_path, scenario_rows()))])
    path.write_text(json.dumps(report_to_json(build_report(loaded.evals, loaded.runs, loaded.rows))))
    with pytest.raises(ReportInputError, match="an agent-evals report, not Promptfoo results"):
        load_results([str(path)])


def test_the_same_eval_twice_counts_once(tmp_path: Path) -> None:
    path = str(write_results(tmp_path, scenario_rows()))
    assert len(load_results([path, path]).rows) == 16


def test_two_files_of_one_suite_add_up(tmp_path: Path) -> None:
    first = write_results(tmp_path, scenario_rows()[:8], "a.json", eval_id="eval-a")
    second = write_results(tmp_path, scenario_rows()[8:], "b.json", eval_id="eval-b")
    loaded = load_results([str(first), str(second)])
    report = build_report(loaded.evals, loaded.runs, loaded.rows)
    assert [e.eval_id for e in report.evals] == ["eval-a", "eval-b"] and report.totals.runs == 16


def test_mode_without_a_manifest_comes_from_the_rows(tmp_path: Path) -> None:
    rows = scenario_rows()
    for row in rows:
        row["response"]["metadata"]["replay"] = {"cassette": "C01.json"}
    info = load_results([str(write_results(tmp_path, rows))]).evals[0]
    assert info.mode == "replay"


def test_the_database_is_where_the_runner_puts_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from agent_evals.paths import promptfoo_config_dir  # the report's and the runner's one folder

    monkeypatch.delenv("PROMPTFOO_CONFIG_DIR", raising=False)
    assert promptfoo_config_dir() == Path.home() / ".promptfoo"
    assert promptfoo_config_dir({"PROMPTFOO_CONFIG_DIR": str(tmp_path)}) == tmp_path  # a worker's environment
    monkeypatch.setenv("PROMPTFOO_CONFIG_DIR", str(tmp_path))
    assert promptfoo_config_dir() == tmp_path
    assert promptfoo_config_dir({}) == Path.home() / ".promptfoo"
