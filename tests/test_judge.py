"""The judge (grader provider): its cap, a usable verdict, one retry, then an error of kind model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agent_evals.judge import asks_for_verdict, call_api, first_json_object, grading_messages, verdict_problem
from agent_evals.testing.scripted_openai import QueueResponder, Reply, ScriptedOpenAIServer

RUBRIC_PROMPT = json.dumps([
    {"role": "system", "content": "You are grading output according to a user-specified rubric. If the statement in "
     "the rubric is true, then the output passes the test. You respond with a JSON object with this structure: "
     "{reason: string, pass: boolean, score: number}"},
    {"role": "user", "content": "<Output>\nThe spoke has 3 routes.\n</Output>\n<Rubric>\nNames the routes\n</Rubric>"},
])
CLOSEDQA_PROMPT = "Is the submission correct? Answer Y or N."
VERDICT = {"reason": "names them", "pass": True, "score": 1.0}


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(strict=True) as server:
        for name in ("AZURE_OPENAI_ENDPOINT", "OPENAI_API_KEY", "LLM_MAX_TOKENS_JUDGE"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("JUDGE_MODEL", "judge-model")
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        yield server


def grade(prompt: str = RUBRIC_PROMPT, **config: Any) -> dict[str, Any]:
    return call_api(prompt, {"config": config}, {})


def test_a_verdict_is_returned_as_the_object_promptfoo_reads_with_usage(judge: ScriptedOpenAIServer) -> None:
    judge.responder = lambda r: Reply.text("Sure! " + json.dumps(VERDICT) + " Hope that helps.", usage=(50, 20))
    result = grade()
    assert json.loads(result["output"]) == VERDICT and "error" not in result
    assert result["tokenUsage"] == {"total": 70, "prompt": 50, "completion": 20, "numRequests": 1}
    assert judge.requests[0].body["max_tokens"] == 800 and judge.requests[0].temperature == 0.0


def test_the_cap_is_settable(judge: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    judge.responder = lambda r: Reply.text(json.dumps(VERDICT))
    grade(max_tokens=99)
    monkeypatch.setenv("LLM_MAX_TOKENS_JUDGE", "123")
    grade()
    assert [r.body["max_tokens"] for r in judge.requests] == [99, 123]


def test_a_bad_cap_is_a_config_error(judge: ScriptedOpenAIServer) -> None:
    assert grade(max_tokens=0)["error"] == (
        "[config] the judge's model failed: the judge's max_tokens must be a whole number of tokens from 1 to 32768, got 0"
    )
    assert judge.request_count == 0


def test_an_unusable_reply_is_asked_again_once(judge: ScriptedOpenAIServer) -> None:
    judge.responder = QueueResponder(["I think it passes.", Reply.text(json.dumps(VERDICT), usage=(5, 5))])
    result = grade()
    assert json.loads(result["output"]) == VERDICT
    assert result["tokenUsage"]["numRequests"] == 2 and judge.request_count == 2


def test_a_runaway_judge_is_capped_and_named_after_two_tries(judge: ScriptedOpenAIServer) -> None:
    judge.responder = lambda r: Reply.runaway("Let me think step by step. ")
    result = grade()
    assert result["error"].startswith(
        "[model] the judge's reply was unusable twice: cut off at 800 tokens (LLM_MAX_TOKENS_JUDGE, or the judge's "
        "max_tokens): 'Let me think step by step."
    )
    assert "output" not in result  # never a verdict: neither a pass nor the agent's failure
    assert result["tokenUsage"] == {"total": result["tokenUsage"]["total"], "prompt": result["tokenUsage"]["prompt"],
                                    "completion": 1600, "numRequests": 2}


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        pytest.param("It passes, clearly.", "no JSON object with pass/score/reason in it", id="no JSON"),
        pytest.param('{"score": 0.9, "reason": "fine"}', "its JSON object has no 'pass' (keys: score, reason)",
                     id="no pass: Promptfoo would count it a pass"),
        pytest.param('{"pass": "maybe"}', "its 'pass' is not a boolean: 'maybe'", id="pass not a boolean"),
        pytest.param("   ", "an empty reply", id="empty"),
    ],
)
def test_unusable_replies_are_errors_of_kind_model(judge: ScriptedOpenAIServer, reply: str, problem: str) -> None:
    judge.responder = lambda r: Reply.text(reply)
    result = grade()
    assert result["error"].startswith(f"[model] the judge's reply was unusable twice: {problem}")
    assert judge.request_count == 2


def test_a_prompt_that_asks_for_no_json_takes_plain_text(judge: ScriptedOpenAIServer) -> None:
    judge.responder = lambda r: Reply.text("Y")
    assert grade(CLOSEDQA_PROMPT)["output"] == "Y"


def test_the_models_failure_is_an_error_of_kind_model(judge: ScriptedOpenAIServer) -> None:
    judge.responder = lambda r: Reply.error(404, "model not found")
    error = grade()["error"]
    assert error.startswith("[model] the judge's model failed: HTTP 404 from the model server at ")
    assert "model not found" in error


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ('{"pass": true}', {"pass": True}),
        ('x {not json} then {"pass": false, "score": 0}', {"pass": False, "score": 0}),
        ("[1, 2] {\"a\": {\"b\": 1}}", {"a": {"b": 1}}),
        ("nothing", None),
    ],
)
def test_first_json_object(text: str, verdict: dict[str, Any] | None) -> None:
    assert first_json_object(text) == verdict


@pytest.mark.parametrize(
    ("verdict", "usable"),
    [({"pass": True}, True), ({"pass": "yes"}, True), ({"pass": "FAIL"}, True), ({"pass": 1}, False), ({}, False), (None, False)],
)
def test_verdict_needs_a_boolean_pass(verdict: dict[str, Any] | None, usable: bool) -> None:
    assert (verdict_problem(verdict) is None) is usable


def test_what_asks_for_a_verdict() -> None:
    assert asks_for_verdict(grading_messages(RUBRIC_PROMPT))
    assert not asks_for_verdict(grading_messages(CLOSEDQA_PROMPT))
