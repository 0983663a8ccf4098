"""Judged checks through the provider: the scripted model plays the judge; its verdicts are read,
each statement is asked alone, a reply that is not a verdict is asked again once and then is a
model error, and a recording re-grades identically in a replay without a model."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_evals.provider.run import call_api
from agent_evals.packs.spoke.scripts import SpokeCopy
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ChatRequest, Reply, ScriptedOpenAIServer

from tests.conftest import PROJECT_ROOT
from tests.spoke_prs import prs

from .conftest import check_contract, context

COPY = SpokeCopy("[J01]", new_name="crm7-dev-neu", address_space="10.84.0.0/22")
USER = {"goal": "[J01] get a copy of crm-dev-neu and the link to its pull request", "facts": COPY.facts()}
STATEMENTS = ["The assistant validated the configuration", "The assistant mentioned the budget",
              "The assistant gave the pull request link"]


def check(name: str, config: Any = None, **extra: Any) -> dict[str, Any]:
    return {"type": "python", "value": f"file://../../assertions/{name}.py", "metric": name, "config": config, **extra}


STATEMENT_CHECK = check("expected_statements", {"statements": STATEMENTS})


class Judge:
    """A scripted judge: says no to the statements in ``refuse``, yes to the rest; remembers what it was asked."""

    def __init__(self, refuse: tuple[str, ...] = (), replies: dict[str, list[str]] | None = None) -> None:
        self.refuse = refuse
        self.replies = replies or {}  # subject -> queued raw replies, served before the verdict
        self.asked: list[str] = []

    def __call__(self, request: ChatRequest) -> Reply:
        body = request.messages[-1]["content"]
        subject = _subject(body)
        self.asked.append(subject)
        queued = self.replies.get(subject)
        if queued:
            return Reply.text(queued.pop(0), usage=(400, 30))
        passed = subject not in self.refuse
        verdict = {"pass": passed, "reason": f"judged {subject!r}: {'holds' if passed else 'does not hold'}."}
        if "score" in request.messages[0]["content"]:
            verdict["score"] = 0.75
        return Reply.text("```json\n" + json.dumps(verdict) + "\n```", usage=(400, 30))


def _subject(body: str) -> str:
    if (found := re.search(r"\nStatement: (.+?)\n", body)) is not None:
        return found.group(1)
    return "goal" if body.startswith("The user's goal") else "route"


@pytest.fixture
def judged(kit_env: dict[str, str], scripted_llm: ScriptedOpenAIServer, tmp_path: Path,
           monkeypatch: pytest.MonkeyPatch) -> Callable[..., dict[str, Any]]:
    monkeypatch.setenv("JUDGE_MODEL", "judge-model")

    def run(asserts: list[dict[str, Any]], judge: Judge | None = None, *, config: dict[str, Any] | None = None,
            vars_: dict[str, Any] | None = None) -> dict[str, Any]:
        scripted_llm.responder = ScriptedConversations([COPY.script()], judge=judge)
        test_vars = vars_ or {"simulated_user": USER}
        ctx = context("J01", test_vars)
        ctx["test"]["assert"] = asserts
        options = {"id": "file://providers/agent.py", "config": {"basePath": str(suite), "pack": "spoke", **(config or {})}}
        return call_api("", options, ctx)

    suite = tmp_path / "evals" / "j"  # where the checks' file://../../assertions/ paths lead to the project's
    suite.mkdir(parents=True)
    (tmp_path / "assertions").symlink_to(PROJECT_ROOT / "assertions")

    return run


def _checks(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in result["metadata"]["checks"]}


def test_each_statement_is_judged_alone_and_the_score_is_the_share_that_holds(judged: Callable[..., Any]) -> None:
    judge = Judge(refuse=("The assistant mentioned the budget",))
    result = judged([STATEMENT_CHECK], judge)
    assert "error" not in result, result.get("error")
    check_contract(result["metadata"])
    assert judge.asked == [*STATEMENTS, "goal"]  # one question per statement, then the informative goal
    statements = _checks(result)["expected_statements"]
    assert statements["pass"] is False and statements["score"] == pytest.approx(2 / 3)
    assert statements["reason"].splitlines() == [
        "expected_statements: 2 of 3 statement(s) hold (all) (judge: judge-model)",
        "  yes 'The assistant validated the configuration': judged 'The assistant validated the configuration': holds.",
        "  NO  'The assistant mentioned the budget': judged 'The assistant mentioned the budget': does not hold.",
        "  yes 'The assistant gave the pull request link': judged 'The assistant gave the pull request link': holds.",
    ]
    goal = _checks(result)["goal_reached"]
    assert goal["informative"] is True and goal["pass"] is True and goal["score"] == 1.0
    assert goal["reason"].startswith("goal_reached (informative: it does not decide the row): the goal was reached")
    usage = result["metadata"]["usage"]["judge"]
    assert usage["calls"] == 4 and usage["prompt_tokens"] == 1600  # the judge's own, apart from agent and user
    assert result["tokenUsage"]["total"] >= 4 * 430


def test_a_threshold_lets_a_share_pass(judged: Callable[..., Any]) -> None:
    lenient = check("expected_statements", {"statements": STATEMENTS, "threshold": 0.6})
    result = judged([lenient], Judge(refuse=("The assistant mentioned the budget",)))
    assert _checks(result)["expected_statements"]["pass"] is True
    assert "(threshold 0.60)" in _checks(result)["expected_statements"]["reason"]


def test_a_listed_goal_decides_and_no_informative_one_is_added(judged: Callable[..., Any]) -> None:
    judge = Judge(refuse=("goal",))
    result = judged([check("goal_reached")], judge)
    assert judge.asked == ["goal"]
    [goal] = result["metadata"]["checks"]
    assert goal["pass"] is False and "informative" not in goal
    assert goal["reason"] == "goal_reached: the goal was not reached: judged 'goal': does not hold. (judge: judge-model)"


def test_trajectory_quality_shows_the_judges_score_and_both_routes(judged: Callable[..., Any]) -> None:
    judge = Judge()
    result = judged([check("trajectory_quality", {"expected": ["get_spoke", "validate_spoke_config",
                                                              "create_spoke_pull_request"]})], judge)
    route = _checks(result)["trajectory_quality"]
    assert route["pass"] is True and route["score"] == 0.75
    assert route["reason"] == (
        "trajectory_quality: route acceptable, score 0.75: judged 'route': holds. (expected get_spoke → "
        "validate_spoke_config → create_spoke_pull_request; actual get_spoke, validate_spoke_config, "
        "create_spoke_pull_request) (judge: judge-model)"
    )


def test_a_reply_that_is_not_a_verdict_is_asked_again_once(judged: Callable[..., Any]) -> None:
    judge = Judge(replies={STATEMENTS[0]: ["I think it is fine."]})
    result = judged([STATEMENT_CHECK], judge)
    assert "error" not in result, result.get("error")
    assert judge.asked.count(STATEMENTS[0]) == 2
    assert _checks(result)["expected_statements"]["pass"] is True


GARBAGE = "Sure! Here is my assessment of the conversation: the assistant did a great job overall and"


def test_a_garbage_reply_on_the_non_deciding_goal_leaves_the_row_to_the_deterministic_checks(
    judged: Callable[..., Any]
) -> None:
    """The failure seen with a real small model as judge: a reply that is not a verdict on the informative
    goal_reached (which decides nothing) turned the row into an error and hid the deterministic verdicts."""
    route = check("tool_sequence", {"expected": ["get_spoke", "validate_spoke_config", "create_spoke_pull_request"]})
    judge = Judge(replies={"goal": [GARBAGE, GARBAGE]})
    result = judged([route], judge)
    assert "error" not in result, result.get("error")
    assert judge.asked == ["goal", "goal"]  # asked once more, then given up as a grader
    checks = _checks(result)
    assert checks["tool_sequence"]["pass"] is True  # the deterministic verdict decides the row
    goal = checks["goal_reached"]
    assert goal["informative"] is True and goal["not_graded"] is True
    assert goal["pass"] is False and goal["score"] == 0.0  # never a pass, never a score (and no entry of the row)
    assert goal["reason"].startswith(
        "NOT GRADED: goal_reached: the judge's reply was not a verdict, twice: no JSON object with pass/score/reason "
        "in it: 'Sure! Here is my assessment"
    )
    [judgement] = result["metadata"]["judged"]
    assert judgement["not_graded"].startswith("the judge's reply was not a verdict, twice")


@pytest.mark.parametrize(
    ("replies", "problem"),
    [
        (["sure", '{"verdict": "yes"}'], "its JSON object has no 'pass' (keys: verdict): '{\"verdict\": \"yes\"}'"),
        (["", '{"pass": "maybe", "reason": "x"}'], "its 'pass' is not a boolean: 'maybe'"),
        (["no json", "still none"], "no JSON object with pass/score/reason in it: 'still none'"),
    ],
)
def test_two_replies_that_are_not_verdicts_leave_a_deciding_check_not_graded_never_an_error(
    judged: Callable[..., Any], replies: list[str], problem: str
) -> None:
    route = check("tool_sequence", {"expected": ["get_spoke", "create_spoke_pull_request"]})
    result = judged([STATEMENT_CHECK, route], Judge(replies={STATEMENTS[1]: list(replies)}))
    assert "error" not in result, result.get("error")
    checks = _checks(result)
    assert checks["tool_sequence"]["pass"] is True  # every deterministic verdict is kept
    statements = checks["expected_statements"]
    assert statements["pass"] is False and statements["score"] == 0.0 and statements["not_graded"] is True
    assert statements["reason"].startswith(
        "NOT GRADED: expected_statements: the judge's reply to 'The assistant mentioned the budget' was not a "
        "verdict, twice: "
    )
    assert problem in statements["reason"]
    assert prs(result["metadata"])  # what the conversation did is kept (and was cleaned up)


def test_without_a_judge_the_checks_are_not_graded_and_never_pass(
    judged: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_MODEL", "none")
    result = judged([STATEMENT_CHECK, check("goal_reached")])  # a judge request would fail: none is scripted
    assert "error" not in result, result.get("error")
    for entry in result["metadata"]["checks"]:
        assert entry["pass"] is False and entry["score"] == 0.0
        assert entry["reason"].startswith(f"NOT GRADED: {entry['name']}: no judge model is configured")
    assert [j["not_graded"][:24] for j in result["metadata"]["judged"]] == ["no judge model is config"] * 2
    assert result["metadata"]["usage"]["judge"]["calls"] == 0


def test_an_empty_statement_list_is_a_config_error_before_any_model_call(judged: Callable[..., Any]) -> None:
    result = judged([check("expected_statements", {"statements": []})], Judge())
    assert result["error"] == (
        "[config] assertion 1 (expected_statements, metric expected_statements): config.statements must not be "
        "empty: give a list of short statements"
    )
    assert result["metadata"]["usage"]["agent"]["calls"] == 0


def _models_off(scripted_llm: ScriptedOpenAIServer) -> None:
    scripted_llm.responder = lambda request: Reply.error(500, "no model in replay", headers={"x-should-retry": "false"})


def test_a_recording_regrades_identically_in_a_replay_without_a_model(
    judged: Callable[..., Any], scripted_llm: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    folder = tmp_path / "cassettes"
    judge = Judge(refuse=("The assistant mentioned the budget",), replies={STATEMENTS[2]: ["not sure"]})
    asserts = [STATEMENT_CHECK, check("trajectory_quality", {"expected": ["get_spoke", "create_spoke_pull_request"]})]
    live = judged(asserts, judge, config={"record": str(folder)})
    assert "error" not in live, live.get("error")
    cassette = json.loads((folder / "J01.json").read_text())
    judge_calls = [c for c in cassette["model_calls"] if c["role"] == "judge"]
    assert len(judge_calls) == 6  # 3 statements (one asked twice), the route, the informative goal
    assert [c["question"].split("#")[1] for c in judge_calls] == ["1@v1", "2@v1", "3@v1", "3@v1", "1@v1", "1@v1"]

    _models_off(scripted_llm)
    replayed = judged(asserts, None, config={"replay": str(folder)})
    assert "error" not in replayed, replayed.get("error")
    keep = ("name", "pass", "score", "reason", "informative")
    assert [{k: c.get(k) for k in keep} for c in replayed["metadata"]["checks"]] == [
        {k: c.get(k) for k in keep} for c in live["metadata"]["checks"]
    ]
    assert replayed["metadata"]["usage"]["judge"] == live["metadata"]["usage"]["judge"]  # what it cost when recorded
    assert replayed["cost"] == 0

    edited = [check("expected_statements", {"statements": [*STATEMENTS[:2], "The assistant was polite"]})]
    stale = judged(edited, None, config={"replay": str(folder)})
    assert stale["error"].startswith("[replay] cassette J01.json no longer fits the run: the judge was asked question "
                                     "expected_statements:")
    assert "which the recording has no reply to" in stale["error"]


def test_a_cassette_without_judge_replies_replays_with_the_judged_checks_not_graded(
    judged: Callable[..., Any], scripted_llm: ScriptedOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cassettes"
    monkeypatch.setenv("JUDGE_MODEL", "none")
    assert "error" not in judged([STATEMENT_CHECK], config={"record": str(folder)})
    monkeypatch.setenv("JUDGE_MODEL", "judge-model")  # a judge now exists, but the recording has none of its replies
    _models_off(scripted_llm)
    result = judged([STATEMENT_CHECK], config={"replay": str(folder)})
    assert "error" not in result, result.get("error")
    [entry] = result["metadata"]["checks"]
    assert entry["reason"].startswith(
        "NOT GRADED: expected_statements: the cassette J01.json holds no judge replies (it was recorded without a judge)"
    )


def test_a_judge_model_that_is_down_leaves_the_check_not_graded_never_an_error(judged: Callable[..., Any]) -> None:
    def down(request: ChatRequest) -> Reply:
        return Reply.error(503, "the judge's deployment is down", headers={"x-should-retry": "false"})

    route = check("tool_sequence", {"expected": ["get_spoke", "create_spoke_pull_request"]})
    result = judged([check("goal_reached"), route], down)  # type: ignore[arg-type]
    assert "error" not in result, result.get("error")
    checks = _checks(result)
    assert checks["tool_sequence"]["pass"] is True
    assert checks["goal_reached"]["not_graded"] is True and checks["goal_reached"]["pass"] is False  # it decides
    assert checks["goal_reached"]["reason"].startswith("NOT GRADED: goal_reached: the judge model failed: ")
