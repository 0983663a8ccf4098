"""Stale golden conversations are named with what changed; unrelated ones stay fresh."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from agent_evals.golden.record import stale_cases
from agent_evals.preflight import offline_tools
from agent_evals.suites.discovery import Suite, select

REAL = select("spoke-create")[0]


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    folder = tmp_path / "spoke-create"
    shutil.copytree(REAL.folder, folder)
    return Suite(REAL.name, folder)


def test_the_golden_conversations_are_fresh() -> None:
    for suite in select("all"):
        assert stale_cases(suite) == [], suite.name


def test_a_changed_goal_makes_only_that_case_stale(suite: Suite) -> None:
    case = suite.folder / "cases" / "3-new.yaml"
    case.write_text(case.read_text().replace("Get a brand-new dev network", "Urgently get a brand-new dev network", 1))
    (found,) = stale_cases(suite)
    assert found[0] == "C17"
    assert found[1].startswith("cassette C17.json is stale: the simulated user's definition changed (goal, persona, "
                               "facts, instructions or temperature)")


def test_changed_instructions_make_every_case_stale(suite: Suite, tmp_path: Path) -> None:
    instructions = tmp_path / "terse.md"
    instructions.write_text("Be terse.")
    config = suite.folder / "promptfooconfig.yaml"
    config.write_text(config.read_text().replace("      pack: spoke", f"      pack: spoke\n      instructions_file: {instructions}"))
    found = stale_cases(suite)
    assert len(found) == 22 and all("is stale: instructions changed;" in text for _, text in found)


def test_a_changed_tool_description_is_named(suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    specs = copy.deepcopy(offline_tools.portal_tool_specs())
    specs["get_doc"]["function"]["description"] += " Now with more detail."
    monkeypatch.setattr("agent_evals.preflight.replay_checks.portal_tool_specs", lambda: specs)
    found = stale_cases(suite)
    assert len(found) == 22 and all("is stale: tool get_doc's description changed;" in text for _, text in found)


def test_golden_help_lists_its_flags_and_exits_0() -> None:
    import subprocess
    import sys

    for command in ([sys.executable, "-m", "agent_evals.golden", "--help"],
                    [sys.executable, "-m", "agent_evals.cli", "golden", "--help"]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "--stale" in done.stdout and "SUITE" in done.stdout
