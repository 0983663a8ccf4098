"""The simulated user checked through the provider, with the scripted model server: a spoiled
conversation is an invalid row (kind user_simulator, neither pass nor fail) that keeps its
deterministic verdicts; what the rules cannot decide goes to the judge (live, recorded, replayed);
a judge that is missing or answers garbage leaves it undecided, never a finding nor an error."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_evals.packs.spoke.scripts import SpokeCopy
from agent_evals.provider.run import call_api
from agent_evals.testing.conversations import ConversationScript, ScriptedConversations
from agent_evals.testing.scripted_openai import ChatRequest, Reply, ScriptedOpenAIServer
from tests.conftest import PROJECT_ROOT

from .conftest import check_contract, context

COPY = SpokeCopy("[U01]", new_name="crm8-dev-neu", address_space="10.85.0.0/22")
USER = {"goal": "[U01] get a copy of crm-dev-neu and the link to its pull request", "facts": COPY.facts()}
ROUTE = {"type": "python", "value": "file://../../assertions/tool_sequence.py", "metric": "route",
         "config": {"expected": ["get_spoke", "create_spoke_pull_request"]}}
GOAL = {"type": "python", "value": "file://../../assertions/goal_reached.py", "metric": "goal"}
# a question answered, then an offer the goal did not ask for: the rules cannot tell whether "done" was early
OFFER = ConversationScript("[U02]", agent=["Port 22 was open to the Internet. Shall I open a corrected pull request?"],
                           user=["[U02] Why did my pull request fail?", "Thanks! [DONE]"])
OFFER_USER = {"goal": "[U02] Find out why the pull request failed.", "facts": {"pull request": "7"}}


class Judge:
    """Answers the questions about the user with ``user`` (a raw reply), the others with a yes."""

    def __init__(self, user: str = '{"pass": true, "reason": "fine"}') -> None:
        self.user = user
        self.asked: list[str] = []

    def __call__(self, request: ChatRequest) -> Reply:
        body = request.messages[-1]["content"]
        about_user = "Question about the user" in body
        self.asked.append("user" if about_user else "agent")
        return Reply.text(self.user if about_user else '{"pass": true, "reason": "the goal was reached"}')


@pytest.fixture
def run(kit_env: dict[str, str], scripted_llm: ScriptedOpenAIServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> Callable[..., dict[str, Any]]:
    def call(script: ConversationScript, case: str, user: dict[str, Any], asserts: list[dict[str, Any]] = (),  # type: ignore[assignment]
             judge: Judge | None = None, config: dict[str, Any] | None = None) -> dict[str, Any]:
        monkeypatch.setenv("JUDGE_MODEL", "judge-model" if judge is not None else "none")
        scripted_llm.responder = ScriptedConversations([script], judge=judge)
        ctx = context(case, {"simulated_user": user})
        ctx["test"]["assert"] = list(asserts)
        # a suite folder of the project: the checks' file://../../assertions/ paths lead to its files
        settings = {"basePath": str(PROJECT_ROOT / "evals" / "spoke-create"), "pack": "spoke", **(config or {})}
        return call_api("", {"id": "file://providers/agent.py", "config": settings}, ctx)

    return call


def _spoiled_script() -> ConversationScript:
    return COPY.script(user=[COPY.request, "Yes, but put it in westus9 instead.", "Thanks! [DONE]"])


def test_a_spoiled_conversation_is_an_invalid_row_that_keeps_its_deterministic_verdicts(run: Callable[..., Any]) -> None:
    judge = Judge()
    result = run(_spoiled_script(), "U01", USER, [ROUTE, GOAL], judge)
    assert result["error"] == (
        "[user_simulator] invalid: U01 turn 2, the user invented region 'westus9' (not in its facts, not said by the "
        "assistant)"
    )
    metadata = result["metadata"]
    check_contract(metadata)
    assert metadata["conversation_end"] == "done" and metadata["error_kind"] is None  # the conversation itself ended
    assert metadata["user_review"]["invalid"] is True
    assert metadata["user_review"]["findings"] == [{"check": "invented_fact", "turn": 2, "by": "rule", "evidence":
                                                    "the user invented region 'westus9' (not in its facts, not said by the assistant)"}]
    checks = {c["name"]: c for c in metadata["checks"]}
    assert checks["tool_sequence"]["pass"] is True  # graded for the record
    assert checks["goal_reached"]["reason"].startswith("NOT GRADED: goal_reached: the simulated user spoiled the conversation")
    assert judge.asked == []  # the agent of a spoiled conversation is not judged: no money spent on it
    assert metadata["rateLimitKind"] == "quota"  # Promptfoo never runs it again on its own


def test_the_user_checks_can_be_switched_off_or_skipped(run: Callable[..., Any]) -> None:
    off = run(_spoiled_script(), "U01", USER, config={"user_checks": False})
    assert "error" not in off and off["metadata"]["user_review"]["skipped"].startswith("the user checks are off")
    skipped = run(_spoiled_script(), "U01", USER, config={"user_checks": {"skip": ["invented_fact"]}})
    assert "error" not in skipped and skipped["metadata"]["user_review"]["findings"] == []
    bad = run(_spoiled_script(), "U01", USER, config={"user_checks": {"skip": ["invented_facts"]}})
    assert bad["error"].startswith("[config] bad provider configuration: user_checks")
    assert "'ended_early'" in bad["error"] and "invented_facts" in bad["error"]


def test_what_the_rules_cannot_decide_goes_to_the_judge(run: Callable[..., Any]) -> None:
    judge = Judge('{"pass": false, "reason": "The assistant still needed an answer."}')
    result = run(OFFER, "U02", OFFER_USER, [], judge)
    assert judge.asked == ["user"]  # the question about the user; the agent of a spoiled conversation is not judged
    assert result["error"] == (
        "[user_simulator] invalid: U02 turn 1, the user said it was done after the assistant asked 'Shall I open a "
        "corrected pull request?': The assistant still needed an answer. (judge: judge-model)"
    )
    [finding] = result["metadata"]["user_review"]["findings"]
    assert finding["by"] == "judge" and finding["check"] == "ended_early"
    assert result["metadata"]["user_review"]["judged"] == 1

    judge = Judge()
    fine = run(OFFER, "U02", OFFER_USER, [], judge)
    assert "error" not in fine and fine["metadata"]["user_review"]["findings"] == []
    assert judge.asked == ["user", "agent"]  # then the informative goal


@pytest.mark.parametrize(
    ("judge", "why"),
    [
        (None, "not judged: no judge model is configured"),
        (Judge("Sure, the user was great and"), "not judged: the judge's reply was not a verdict, twice: no JSON object"),
    ],
    ids=["no-judge", "garbage"],
)
def test_a_judge_that_cannot_answer_leaves_the_check_undecided(
    run: Callable[..., Any], judge: Judge | None, why: str
) -> None:
    result = run(OFFER, "U02", OFFER_USER, [], judge)
    assert "error" not in result, result.get("error")  # never a finding, never an error
    [undecided] = result["metadata"]["user_review"]["undecided"]
    assert undecided["check"] == "ended_early" and undecided["turn"] == 1
    assert undecided["why"].startswith(why)


def test_a_recorded_judge_answer_about_the_user_replays_and_an_older_recording_leaves_it_undecided(
    run: Callable[..., Any], scripted_llm: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    folder = tmp_path / "cassettes"
    live = run(OFFER, "U02", OFFER_USER, [], Judge('{"pass": false, "reason": "Too early."}'), {"record": str(folder)})
    cassette = json.loads((folder / "U02.json").read_text())
    assert [c["question"] for c in cassette["model_calls"] if c["role"] == "judge"][0] == "user:ended_early:turn1#1@v1"
    scripted_llm.responder = lambda request: Reply.error(500, "no model in replay", headers={"x-should-retry": "false"})
    replayed = run(OFFER, "U02", OFFER_USER, [], Judge(), {"replay": str(folder)})
    assert replayed["error"] == live["error"]

    cassette["model_calls"] = [c for c in cassette["model_calls"] if not str(c.get("question", "")).startswith("user:")]
    (folder / "U02.json").write_text(json.dumps(cassette))
    older = run(OFFER, "U02", OFFER_USER, [], Judge(), {"replay": str(folder)})
    assert "error" not in older, older.get("error")
    [undecided] = older["metadata"]["user_review"]["undecided"]
    assert re.match(r"not judged: the cassette U02\.json holds no judge reply to this question", undecided["why"])


def test_fixed_messages_are_not_checked(run: Callable[..., Any], kit_env: dict[str, str],
                                        scripted_llm: ScriptedOpenAIServer, tmp_path: Path) -> None:
    scripted_llm.responder = ScriptedConversations([COPY.script()])
    ctx = context("U03", {"user_messages": [COPY.request + " Put it in westus9.", "Yes"]})
    result = call_api("", {"config": {"basePath": str(tmp_path)}}, ctx)
    assert "error" not in result, result.get("error")
    assert result["metadata"]["user_review"]["skipped"].startswith("fixed user messages: no user checks apply")
