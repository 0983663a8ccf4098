"""Row by row through a ``-o`` file as Promptfoo writes it (indented by two), and the same
report from a file in another layout (parsed whole)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_evals.report.json_rows import split_rows
from agent_evals.report.promptfoo_json import read_results_file
from agent_evals.testing.promptfoo_results import results_file
from tests.report.conftest import write_results
from tests.report.scenario import scenario_rows


def test_rows_one_at_a_time(tmp_path: Path) -> None:
    path = write_results(tmp_path, scenario_rows())
    split = split_rows(path, lambda raw: raw["testIdx"])
    assert split is not None
    document, rows = split
    assert rows == list(range(16))
    assert document["results"]["results"] == [] and document["evalId"].startswith("eval-synthetic")
    assert (
        len(document["config"]["tests"]) == 3
    )  # the config's tests, indented like rows, stay in the document


def test_both_layouts_give_the_same_rows(tmp_path: Path) -> None:
    pretty = read_results_file(write_results(tmp_path, scenario_rows(), "pretty.json"))
    compact = read_results_file(write_results(tmp_path, scenario_rows(), "compact.json", compact=True))
    assert pretty[1] == compact[1] and len(pretty[1]) == 16
    assert pretty[0].eval_id == compact[0].eval_id and pretty[0].finished and compact[0].finished


def test_other_layouts_are_not_split(tmp_path: Path) -> None:
    data = results_file(scenario_rows())
    for name, text in (("compact.json", json.dumps(data)), ("four.json", json.dumps(data, indent=4))):
        (tmp_path / name).write_text(text)
        assert split_rows(tmp_path / name, lambda raw: raw) is None
        assert len(read_results_file(tmp_path / name)[1]) == 16


def test_a_single_row_and_no_row(tmp_path: Path) -> None:
    assert read_results_file(write_results(tmp_path, scenario_rows()[:1], "one.json"))[1][0].case_id == "C01"
    assert read_results_file(write_results(tmp_path, [], "none.json"))[1] == []


def test_a_cut_off_file_is_not_split(tmp_path: Path) -> None:
    path = write_results(tmp_path, scenario_rows())
    path.write_bytes(path.read_bytes()[:-5000])
    assert split_rows(path, lambda raw: raw) is None
