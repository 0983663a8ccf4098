"""``agent-evals regrade``: an old eval re-graded after a check changed (offline, from the recorded
run records), judged checks from recorded verdicts while their questions are today's and live with
a judge, the old and new evals kept apart by their graders, and the new eval in the viewer."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_evals.assertions import tool_sequence
from agent_evals.cli import main
from agent_evals.judging.questions import rubric_sha256
from agent_evals.record import judgement_key
from agent_evals.regrade.rows import regrade_row
from agent_evals.report import ReportInputError, build_report, compare, load_results
from agent_evals.testing.kit_rows import kit_row
from agent_evals.testing.promptfoo_results import result_row
from agent_evals.testing.scripted_openai import ChatRequest, Reply, ScriptedOpenAIServer
from tests.report.conftest import import_results, needs_promptfoo, write_results

SEQUENCE = ("tool_sequence", {"expected": ["open_ticket"]}, "tool_sequence")
FORBIDDEN = ("tool_not_executed", {"tools": ["delete_*"]}, "forbidden")
STATEMENTS = {"statements": ["The ticket was opened."]}
OLD = tool_sequence.VERSION  # the version the old eval was graded by; the test's "v2" is one more


@pytest.fixture(autouse=True)
def _folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMPTFOO_CONFIG_DIR", str(tmp_path / "promptfoo"))
    monkeypatch.setenv("AGENT_EVALS_DATA_DIR", str(tmp_path / "data" / "portal"))
    monkeypatch.chdir(tmp_path)


def _stricter(monkeypatch: pytest.MonkeyPatch) -> None:
    """tool_sequence v2: the expected calls must be all the calls, in order (its old 'strict')."""
    original = tool_sequence.grade

    def grade(config: Any, metadata: Any) -> Any:
        return original({**(config or {}), "mode": "strict"}, metadata)

    monkeypatch.setattr(tool_sequence, "grade", grade)
    monkeypatch.setattr(tool_sequence, "VERSION", OLD + 1)


def _old_eval(tmp_path: Path) -> Path:
    rows = [
        kit_row("C01", 0, [SEQUENCE, FORBIDDEN]),  # get_item, open_ticket: passes v1, not v2 (strict)
        kit_row("C02", 1, [SEQUENCE, FORBIDDEN], tool_calls=[("open_ticket", {"queue": "it"})]),
        result_row("C03", 2, "error", error_kind="system"),
    ]
    rows[0]["gradingResult"]["componentResults"].append(
        {"pass": True, "score": 1.0, "reason": "Assertion passed", "assertion": {"type": "contains", "value": "Done"}}
    )
    return write_results(tmp_path, rows, "old.json", eval_id="eval-old")


def test_regrade_after_a_check_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    old = _old_eval(tmp_path)
    _stricter(monkeypatch)
    out = tmp_path / "new.json"
    assert main(["regrade", str(old), "-o", str(out), "--no-import"]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[0].startswith(f"regrade: eval-old → {out} (eval eval-")
    assert said[0].endswith(": 3 row(s), 4 kit check(s) graded again, 1 other assertion(s) kept as recorded")
    assert said[1] == "verdicts changed in 1 row(s): C01 pass→fail"

    data = json.loads(out.read_text())
    assert data["evalId"] != "eval-old" and data["config"]["metadata"]["agentEvalsRegrade"]["from"] == "eval-old"
    c01, c02, c03 = data["results"]["results"]
    assert (c01["success"], c01["failureReason"], c02["success"], c03["failureReason"]) == (False, 1, True, 2)
    sequence = c01["gradingResult"]["componentResults"][0]
    assert sequence["pass"] is False and sequence["reason"].startswith(
        "tool_sequence strict: expected open_ticket; actual get_item, open_ticket; first difference at position 1"
    )
    assert c01["gradingResult"]["componentResults"][2]["reason"] == "Assertion passed"  # Promptfoo's own: kept
    assert c01["error"] == sequence["reason"] and c01["namedScores"]["tool_sequence"] == 0.0
    stamps = [entry["grader"]["version"] for entry in c01["response"]["metadata"]["checks"]]
    assert stamps == [OLD + 1, 1]  # tool_sequence one version on, tool_not_executed as it was
    assert data["results"]["stats"]["successes"] == 1 and data["results"]["stats"]["failures"] == 1

    # the old eval and the new one were graded by different versions: not compared unless asked
    before = build_report(*_loaded([str(old)]))
    after = build_report(*_loaded([str(out)]))
    change = f"tool_sequence: version v{OLD} → v{OLD + 1} in 2 case(s) (C01, C02)"
    with pytest.raises(ReportInputError, match=re.escape(change)):
        compare(after, before)
    comparison = compare(after, before, across_grader_versions=True)
    assert [c.line() for c in comparison.grader_changes] == [change]
    assert [c.id for c in comparison.of("regression")] == ["C01"]
    assert main(["report", str(out), "--baseline", str(old)]) == 2
    assert "--across-grader-versions" in capsys.readouterr().err


def _loaded(specs: list[str]) -> tuple[Any, ...]:
    loaded = load_results(specs)
    return loaded.evals, loaded.runs, loaded.rows


def _judged_row(rubric: str, *, passed: bool = True) -> dict[str, Any]:
    judgement = {"check": "expected_statements", "key": judgement_key("expected_statements", STATEMENTS),
                 "verdicts": [{"question": "The ticket was opened.", "pass": passed, "reason": "it was"}],
                 "model": "judge-model", "rubric": rubric}
    return kit_row("Q01", 0, [("expected_statements", STATEMENTS, "statements")], judged=[judgement])


def test_judged_checks_reuse_recorded_verdicts_only_for_todays_questions() -> None:
    same = regrade_row(_judged_row(rubric_sha256("expected_statements"), passed=False))
    assert (same.before, same.after) == ("fail", "fail")  # the recorded "no" still answers today's question
    stale = regrade_row(_judged_row("0123456789ab"))
    component = stale.row["gradingResult"]["componentResults"][0]
    assert component["pass"] is True and component["score"] == 0 and component["assertion"]["weight"] == 0
    assert component["reason"].startswith(
        "NOT GRADED: expected_statements: the recorded verdicts answer other questions (rubric 0123456789ab, today "
    )
    assert stale.row["metadata"]["not_graded"][0].startswith("expected_statements (statements): ")
    loaded = build_report([], [], [_row(stale.row)])
    assert loaded.cases[0].not_graded_deciding == 1  # the gate cannot decide on it


def _row(raw: dict[str, Any]) -> Any:
    from agent_evals.report.rows import row_from_promptfoo

    return row_from_promptfoo(raw, "eval-x")


@pytest.fixture
def live_judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    asked: list[str] = []

    def judge(request: ChatRequest) -> Reply:
        asked.append(request.messages[-1]["content"])
        return Reply.text('{"pass": false, "reason": "no ticket was opened"}', usage=(300, 20))

    with ScriptedOpenAIServer(judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("JUDGE_MODEL", "judge-model")
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        yield asked


def test_regrade_with_a_live_judge(tmp_path: Path, live_judge: list[str],
                                   capsys: pytest.CaptureFixture[str]) -> None:
    old = write_results(tmp_path, [_judged_row("0123456789ab")], "old.json", eval_id="eval-old")
    out = tmp_path / "new.json"
    assert main(["regrade", str(old), "-o", str(out), "--no-import", "--judge"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "verdicts changed in 1 row(s): Q01 pass→fail"
    (row,) = json.loads(out.read_text())["results"]["results"]
    # the statement, and the case's goal (an informative goal_reached, as a live run asks it)
    assert len(live_judge) == 2 and any("Statement: The ticket was opened." in q for q in live_judge)
    judgement = row["response"]["metadata"]["judged"][0]
    assert judgement["rubric"] == rubric_sha256("expected_statements") and judgement["model"] == "judge-model"
    assert row["response"]["metadata"]["usage"]["judge"]["calls"] == 2
    informative = [e for e in row["response"]["metadata"]["checks"] if e.get("informative")]
    assert [(e["name"], e["pass"]) for e in informative] == [("goal_reached", False)]
    assert row["gradingResult"]["componentResults"][0]["reason"].startswith("expected_statements: 0 of 1")


def test_a_judge_is_needed_for_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("JUDGE_MODEL", "none")
    old = write_results(tmp_path, [_judged_row("x")], "old.json")
    assert main(["regrade", str(old), "--judge", "--no-import"]) == 2
    assert capsys.readouterr().err.startswith("regrade: --judge: no judge model is configured")
    assert main(["regrade", "eval-nope", "--no-import"]) == 2
    assert capsys.readouterr().err.startswith("regrade: no Promptfoo results database at ")


@needs_promptfoo
def test_regrade_an_eval_of_the_results_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import_results(tmp_path / "promptfoo", _old_eval(tmp_path))
    _stricter(monkeypatch)
    assert main(["regrade", "eval-old"]) == 0
    new_id = capsys.readouterr().out.splitlines()[0].split("imported as ")[1].split(")")[0]
    loaded = load_results(["latest"])
    assert [e.eval_id for e in loaded.evals] == [new_id]
    report = build_report(loaded.evals, loaded.runs, loaded.rows)
    assert [(c.id, c.verdict) for c in report.cases] == [("C01", "fail"), ("C02", "pass"), ("C03", "error")]
    assert report.complete is False and report.evals[0].finished  # the error row, not an unfinished eval
    assert {g.version for c in report.cases for g in c.graders if g.check == "tool_sequence"} == {OLD + 1}
    assert (tmp_path / "results" / "eval-old.regraded.json").is_file()


def test_regrade_an_eval_graded_by_tool_sequence_v1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The real change of this kit: version 1 of tool_sequence passed `expected: []` (in_order) on a run
    that made calls; version 2 fails it. An eval graded by version 1, as that kit stored it, regraded."""
    row = kit_row("C07", 0, [("tool_sequence", {"expected": []}, "no_tools")])
    component = row["gradingResult"]["componentResults"][0]
    v1 = "tool_sequence in_order: expected (no tool calls); actual get_item, open_ticket; matches"
    component.update({"pass": True, "score": 1.0, "reason": v1})
    row["response"]["metadata"]["checks"][0].update({"pass": True, "score": 1.0, "reason": v1})
    row["response"]["metadata"]["checks"][0]["grader"]["version"] = 1
    row.update(success=True, failureReason=0, error=None)
    row["gradingResult"].update({"pass": True, "score": 1.0, "reason": "All assertions passed"})
    old = write_results(tmp_path, [row], "old.json", eval_id="eval-v1")
    assert main(["regrade", str(old), "-o", str(tmp_path / "new.json"), "--no-import"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "verdicts changed in 1 row(s): C07 pass→fail"
    (new,) = json.loads((tmp_path / "new.json").read_text())["results"]["results"]
    assert new["gradingResult"]["componentResults"][0]["reason"] == (
        "tool_sequence in_order: expected (no tool calls); actual get_item, open_ticket; expected no tool calls, "
        "got 2: get_item, open_ticket"
    )
    assert new["response"]["metadata"]["checks"][0]["grader"]["version"] == tool_sequence.VERSION == 2
