"""``agent-evals merge``: shards' files make the eval the unsharded run makes (rows re-indexed,
stats and metrics summed), and what cannot be one eval is refused in one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_evals.report.build import build_report
from agent_evals.report.format_json import report_to_json
from agent_evals.report.promptfoo_json import read_results_file
from agent_evals.shards.merge import check_shards, merge_shards, read_shard_files
from agent_evals.runner.merge_command import merge_command
from agent_evals.shards.stamp import read_stamp, stamp_results_file
from tests.shards.synthetic import shard_files, shard_stamp, unsharded, write_file


def flaky_c02(case: str, repeat: int) -> str:
    return "fail" if case == "C02" and repeat == 1 else "error" if case == "C05" and repeat == 0 else "pass"


def _report(path: Path) -> dict[str, Any]:
    """Per case, group and metric, as the report says (the eval id and suite aside: only the merged
    eval knows its suite, from the shards' stamps)."""
    info, rows = read_results_file(path)
    data = report_to_json(build_report([info], [], rows))
    text = json.dumps({k: data[k] for k in ("cases", "totals", "metrics", "errors_by_kind", "groups")})
    figures = json.loads(text.replace(info.eval_id, "EVAL"))
    for case in figures["cases"]:
        case.pop("suite")
    return figures


def _rows(path: Path) -> list[tuple[int, str, bool, int]]:
    rows = json.loads(path.read_text())["results"]["results"]
    return [(r["testIdx"], r["testCase"]["description"], r["success"], r["failureReason"]) for r in rows]


def _prompt_metrics(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())["results"]["prompts"][0]["metrics"]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENT_EVALS_DATA_DIR", str(tmp_path / "data" / "portal"))  # no project manifests
    return tmp_path


def test_four_shards_merge_into_the_unsharded_eval(folder: Path) -> None:
    whole = unsharded(folder, 7, 3, flaky_c02)
    files = shard_files(folder, 4, 7, 3, flaky_c02)
    merged = merge_shards(check_shards(read_shard_files(files[::-1])), folder / "merged.json")

    assert (merged.rows, merged.shards, merged.missing) == (21, (1, 2, 3, 4), ())
    assert _rows(merged.path) == _rows(whole)  # the same rows, numbered as the unsharded run numbers them
    assert _prompt_metrics(merged.path) == _prompt_metrics(whole)
    data = json.loads(merged.path.read_text())
    assert {k: v for k, v in data["results"]["stats"].items() if k != "durationMs"} == {
        k: v for k, v in json.loads(whole.read_text())["results"]["stats"].items() if k != "durationMs"
    }
    assert data["results"]["stats"]["durationMs"] == 1000  # the longest shard's, not the sum
    assert _report(merged.path) == _report(whole)
    assert data["evalId"].startswith("eval-") and data["evalId"].endswith("-2026-01-01T10:00:01")
    assert data["metadata"]["evaluationCreatedAt"] == "2026-01-01T10:00:01.000Z"  # the first shard's start
    assert data["config"]["description"] == "tickets · replay · shards 1, 2, 3, 4 of 4"
    assert data["config"]["metadata"]["agentEvals"]["format"] == "agent-evals/merged@1"
    again = merge_shards(check_shards(read_shard_files(files)), folder / "again.json")
    assert again.eval_id == merged.eval_id  # merging the same shards again replaces the eval


def test_a_missing_shard_is_named_and_the_merged_eval_is_incomplete(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = shard_files(folder, 4, 7, 1, lambda case, r: "pass", only=[1, 2, 4])
    code = merge_command(files, output=str(folder / "merged.json"), import_eval=False)

    out = capsys.readouterr().out
    assert code == 1
    assert "merge: tickets: shard(s) 3/4 missing: 2 case(s) did not run (C03, C07); the merged eval is incomplete" in out
    info, rows = read_results_file(folder / "merged.json")
    report = build_report([info], [], rows)
    assert not report.complete
    assert report.incomplete == (
        "eval eval-" + info.eval_id.split("-", 1)[1] + " (tickets): 2 selected case(s) ran fewer than 1 time(s): "
        "C03 0/1, C07 0/1",
        "suite tickets: shard(s) 3/4 missing (no results of them were merged or read)",
    )


def test_the_report_of_shard_files_themselves_names_a_missing_shard(folder: Path) -> None:
    files = shard_files(folder, 3, 6, 1, lambda case, r: "pass", only=[1, 3])
    read = [read_results_file(path) for path in files]
    report = build_report([info for info, _ in read], [], [row for _, rows in read for row in rows])
    assert report.incomplete == ("suite tickets: shard(s) 2/3 missing (no results of them were merged or read)",)
    assert report.totals.cases == 4


def _refused(files: list[Path], capsys: pytest.CaptureFixture[str], output: str | None = None) -> str:
    code = merge_command(files, output=output, import_eval=False)
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    return lines[0]


def test_a_shard_given_twice_is_refused(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = shard_files(folder, 2, 4, 1, lambda case, r: "pass")
    copy = folder / "copy.json"
    copy.write_bytes(second.read_bytes())
    assert _refused([first, second, copy], capsys) == (
        f"merge: shard 2/2 of tickets is given twice: {second} and {copy}"
    )
    assert not (folder / "tickets.json").exists()


def test_shards_of_another_config_or_suite_are_refused(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = shard_files(folder, 2, 4, 1, lambda case, r: "pass")
    other = write_file(folder / "other.json", [], created="2026-01-01T10:00:00.000Z", eval_id="eval-o")
    stamp_results_file(other, shard_stamp(2, 2, 4, 1, fingerprint="0" * 16))
    assert _refused([first, other], capsys) == (
        f"merge: {other} (shard 2/2) and {first} (shard 1/2) ran different configs: other suite files, models, "
        "git revision or agent instructions (the eval description differs)"
    )
    repeated = write_file(folder / "repeated.json", [], created="2026-01-01T10:00:00.000Z", eval_id="eval-r")
    stamp_results_file(repeated, shard_stamp(2, 2, 4, 3))
    assert "ran different configs: --repeat 1 against 3" in _refused([first, repeated], capsys)
    foreign = write_file(folder / "foreign.json", [], created="2026-01-01T10:00:00.000Z", eval_id="eval-f")
    stamp_results_file(foreign, shard_stamp(2, 2, 4, 1, suite="billing"))
    assert _refused([first, foreign], capsys, output=str(folder / "m.json")) == (
        "merge: the files are of different suites (billing, tickets); merge one suite at a time, "
        "or name the output with {suite} (-o merged/{suite}.json)"
    )
    assert not (folder / "m.json").exists()


def test_several_suites_merge_into_one_file_each(folder: Path) -> None:
    first, second = shard_files(folder, 2, 4, 1, lambda case, r: "pass")
    (folder / "billing").mkdir()
    billing = shard_files(folder / "billing", 1, 2, 1, lambda case, r: "pass")
    stamp_results_file_suite(billing[0], "billing")
    assert merge_command([first, second, *billing], output=str(folder / "m" / "{suite}.json"), import_eval=False) == 0
    assert sorted(p.name for p in (folder / "m").iterdir()) == ["billing.json", "tickets.json"]


def stamp_results_file_suite(path: Path, suite: str) -> None:
    """Re-stamp a synthetic file as another suite's (its first stamp line replaced)."""
    lines = path.read_bytes().split(b"\n", 3)
    path.write_bytes(b"\n".join(lines[:2] + [lines[3]]))
    stamp_results_file(path, shard_stamp(1, 1, 2, 1, suite=suite))


def test_a_file_that_is_no_shard_or_a_row_the_plan_does_not_give_is_refused(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = unsharded(folder, 2, 1, lambda case, r: "pass")
    assert _refused([whole], capsys) == (
        f"merge: {whole}: not a shard's results file (no shard stamp): write it with "
        "`npm run eval -- <suite> --shard I/N`"
    )
    stamp_results_file(whole, shard_stamp(1, 2, 2, 1))  # shard 1 of 2 runs C01 only; this file has C02 too
    assert _refused([whole], capsys) == (
        f"merge: {whole}: test 'C02 a synthetic case' is not one the plan gives shard 1/2 "
        "(was the file renamed, or run with other filters?)"
    )


def test_the_stamp_leaves_the_file_readable_by_the_report_and_promptfoo_layout(folder: Path) -> None:
    (path,) = shard_files(folder, 1, 3, 2, lambda case, r: "pass")
    assert read_stamp(path)["format"] == "agent-evals/shard@1"
    assert json.loads(path.read_text())["agentEvals"]["shard"] == 1
    info, rows = read_results_file(path)
    assert (info.suite, info.shards, info.shard_count, info.selected, len(rows)) == (
        "tickets", (1,), 1, ("C01", "C02", "C03"), 6
    )


def test_a_compact_results_file_merges_too(folder: Path) -> None:
    first, second = shard_files(folder, 2, 4, 1, lambda case, r: "pass")
    data = json.loads(second.read_text())
    second.write_text(json.dumps(data))  # one line: no longer Promptfoo's layout, and no stamp line
    assert read_stamp(second) is None
    second.write_text('{\n  "evalId": ' + json.dumps(data["evalId"]) + ',\n  "agentEvals": '
                      + json.dumps(data["agentEvals"]) + ',\n' + json.dumps({k: v for k, v in data.items()
                      if k not in ("evalId", "agentEvals")})[1:])
    merged = merge_shards(check_shards(read_shard_files([first, second])), folder / "merged.json")
    assert [r[0] for r in _rows(merged.path)] == [0, 1, 2, 3]
