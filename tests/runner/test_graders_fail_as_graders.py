"""Through real Promptfoo: a judge that answers garbage on the informative goal_reached (a check
that does not decide the row) leaves the row to its deterministic checks — a pass here — with the
goal NOT GRADED and named, never an error row (the failure seen with a real small model as judge)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_evals.golden.record import build_scripts
from agent_evals.runner.run import run
from agent_evals.suites.discovery import select
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ChatRequest, Reply, ScriptedOpenAIServer
from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)
GARBAGE = "Sure! Here is my assessment of the conversation: the assistant did a great job overall"


@pytest.fixture
def garbage_judge(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    asked: list[str] = []

    def judge(request: ChatRequest) -> Reply:
        asked.append(request.messages[-1]["content"][:40])
        return Reply.text(GARBAGE)

    with ScriptedOpenAIServer(ScriptedConversations(build_scripts(select("spoke-create")[0]), judge=judge)) as server:
        for key, value in {"OPENAI_BASE_URL": server.base_url, "AGENT_MODEL": "agent-model", "USER_MODEL": "user-model",
                           "JUDGE_MODEL": "judge-model", "LLM_MAX_RETRIES": "0"}.items():
            monkeypatch.setenv(key, value)
        yield asked


def test_a_garbage_reply_on_the_informative_goal_leaves_the_row_to_the_deterministic_checks(
    isolated: Path, garbage_judge: list[str]
) -> None:
    out = isolated / "results.json"
    code = run("spoke-create", None, None, ["--filter-pattern", "^C01 ", "-o", str(out), "-j", "1"])

    [row] = json.loads(out.read_text())["results"]["results"]
    assert code == 0 and row["success"] is True and row["failureReason"] == 0 and "error" not in row
    assert len(garbage_judge) == 2  # asked once more, then given up as a grader
    entries = row["gradingResult"]["componentResults"]
    assert not [e for e in entries if "goal_reached" in str(e["reason"])]  # informative: no entry of the row
    goal = next(c for c in row["response"]["metadata"]["checks"] if c["name"] == "goal_reached")
    assert goal["informative"] and goal["not_graded"] and goal["pass"] is False and goal["score"] == 0
    assert "the judge's reply was not a verdict, twice" in goal["reason"] and "'Sure! Here is my" in goal["reason"]
    assert len(entries) >= 6 and all(e["pass"] for e in entries)  # every deterministic verdict kept
    assert "goal_reached" not in row["namedScores"]  # a check not graded has no score
