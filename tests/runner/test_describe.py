"""The eval's one-line description says NOT GRADED exactly when a judged check that decides rows
would go ungraded (a conversation's informative goal_reached decides nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_evals.runner.describe import eval_description
from agent_evals.suites.files import load_suite
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
