"""The eval's one-line description says NOT GRADED exactly when a judged check that decides rows
would go ungraded (a conversation's informative goal_reached decides nothing)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_evals.runner.describe import eval_description
from agent_evals.suites import files
from agent_evals.suites.files import load_suite, suite_reads_kept
from agent_evals.suites.discovery import Suite

CONFIG = """\
description: a suite
prompts: ["{{ request }}"]
providers:
  - id: file://../../providers/agent.py
    config: {agent: spoke, mode: %(mode)s}
tests:
  - description: T01 one case
    metadata: {id: T01, group: g, priority: smoke}
    vars: %(vars)s
    assert:
      - type: python
        value: file://../../assertions/tool_sequence.py
        metric: tool_sequence
        config: {expected: [get_spoke]}
%(extra)s"""
FIXED = {"mode": "single_turn", "vars": "{request: 'Which spokes are there?'}", "extra": ""}
GOAL = {"mode": "conversation", "vars": "{simulated_user: {goal: Get a spoke, persona: A developer}}", "extra": ""}
JUDGED = {**FIXED, "extra": """\
      - type: python
        value: file://../../assertions/expected_statements.py
        metric: statements
        config: {statements: [The answer names a spoke.]}
"""}


def _suite(tmp_path: Path, fields: dict[str, str]) -> Suite:
    folder = tmp_path / "evals" / "a-suite"
    folder.mkdir(parents=True)
    (folder / "promptfooconfig.yaml").write_text(CONFIG % fields)
    suite = Suite("a-suite", folder)
    assert len(load_suite(suite).tests) == 1  # the suite loads: a broken one would say nothing either
    return suite


@pytest.mark.parametrize(("fields", "judged"), [(FIXED, False), (GOAL, False), (JUDGED, True)])
def test_not_graded_only_where_a_judge_is_needed_and_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fields: dict[str, str], judged: bool
) -> None:
    monkeypatch.setenv("JUDGE_MODEL", "none")
    description = eval_description(_suite(tmp_path, fields), "replay", "abc1234")
    assert description.startswith("a-suite · replay · models as recorded · rev abc1234")
    assert description.endswith("model-graded checks NOT GRADED (no judge)") == judged


def test_a_judge_grades_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("JUDGE_MODEL", "judge-model")
    assert "NOT GRADED" not in eval_description(_suite(tmp_path, JUDGED), "replay", None)


def test_a_live_description_names_each_model_and_the_instructions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_MODEL", "none")
    monkeypatch.setenv("USER_MODEL", "user-y")
    description = eval_description(_suite(tmp_path, GOAL), "live", None)
    shape = r"a-suite · live · agent [\w.-]+, user user-y, judge none · instructions [0-9a-f]{8}"
    assert re.fullmatch(shape, description), description


def test_a_run_reads_each_suite_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Within ``suite_reads_kept`` (every ``agent-evals run``) a suite's files are read once, strict and
    lenient apart; outside it, every read sees the files as they are now."""
    suite = _suite(tmp_path, FIXED)
    reads: list[Path] = []
    real = files.read_yaml
    monkeypatch.setattr(files, "read_yaml", lambda path: reads.append(path) or real(path))
    with suite_reads_kept():
        first = load_suite(suite)
        with suite_reads_kept():  # nested: the same keeping
            assert load_suite(suite) is first
        eval_description(suite, "replay", None)
        assert load_suite(suite, lenient=True) is not first
    assert reads == [suite.config, suite.config]
    suite.config.write_text(suite.config.read_text().replace("T01 one case", "T01 renamed"))
    assert load_suite(suite).tests[0].description == "T01 renamed"
    assert load_suite(suite) is not load_suite(suite)
