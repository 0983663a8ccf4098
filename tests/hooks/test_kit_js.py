"""hooks/kit.js, the suites' Promptfoo hooks, run in Node as Promptfoo runs them."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from agent_evals.runner.system_handoff import SystemHandoff
from tests.conftest import PROJECT_ROOT

NODE = PROJECT_ROOT / "node_modules" / ".bin" / "node"
pytestmark = pytest.mark.skipif(not NODE.exists(), reason="npm packages not installed")
RUBRIC = {"type": "llm-rubric", "value": "is polite", "metric": "rubric"}
FACTS = {"type": "icontains-all", "value": ["a"], "metric": "key_facts"}


def hook(name: str, argument: dict[str, Any], env: dict[str, str] | None = None) -> Any:
    script = (
        "const k = require('./hooks/kit.js');"
        f"k.{name}({json.dumps(argument)}).then(r => console.log('RESULT ' + JSON.stringify(r === undefined ? null : r)));"
    )
    base = {"PATH": "/usr/bin:/bin", **(env or {})}
    done = subprocess.run([str(NODE), "-e", script], cwd=PROJECT_ROOT, env=base, capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    return json.loads(next(line for line in lines if line.startswith("RESULT "))[7:]), lines


def test_before_each_without_a_grader_takes_the_check_out_and_lists_it_as_not_graded() -> None:
    """No entry stands in for it: Promptfoo (and its viewer) counts every assertion as passed or failed, a
    weight-0 one as passed, so an entry would show a check that never ran as a pass."""
    out, _ = hook("beforeEach", {"test": {"description": "Q01", "assert": [RUBRIC, FACTS], "metadata": {"id": "Q01"}}})
    test = out["test"]
    assert test["metadata"] == {"id": "Q01", "not_graded": ["llm-rubric (rubric): no grader model"]}
    assert test["assert"] == [FACTS]


@pytest.mark.parametrize(
    ("env", "asserts"),
    [
        ({"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "AGENT_MODEL": "m"}, [RUBRIC]),  # a grader exists
        ({"AGENT_EVALS_JUDGE": "1"}, [RUBRIC]),  # the runner says so
        ({}, [FACTS]),  # nothing model-graded: the test is left alone
    ],
)
def test_before_each_leaves_the_test_alone_otherwise(env: dict[str, str], asserts: list[dict[str, Any]]) -> None:
    assert hook("beforeEach", {"test": {"assert": asserts}}, env)[0] is None


def test_judge_model_none_and_the_runner_switch_grading_off() -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "AGENT_MODEL": "m", "JUDGE_MODEL": "none"}
    assert hook("beforeEach", {"test": {"assert": [RUBRIC]}}, env)[0]["test"]["assert"] == []
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "AGENT_MODEL": "m", "AGENT_EVALS_JUDGE": "0"}
    assert hook("beforeEach", {"test": {"assert": [RUBRIC]}}, env)[0]["test"]["assert"] == []


ROW = {
    "success": False, "failureReason": 1, "latencyMs": 2340, "provider": {"id": "file://p.py", "label": "spoke"},
    "response": {"metadata": {"case_id": "C01", "cleanup": {"undone": [{"kind": "pull_request", "id": "3"}], "by": "provider"}}},
    "gradingResult": {"componentResults": [
        {"pass": True, "reason": "NOT GRADED: x"}, {"pass": False, "reason": "tool_sequence in_order: missing\nmore"},
        {"pass": False, "reason": "argument_match: the last failure"},
    ]},
    "error": "argument_match: the last failure",  # Promptfoo's error of a failed row: its last failing entry
}


def test_after_each_prints_the_case_and_leaves_a_row_the_provider_cleaned(tmp_path) -> None:  # noqa: ANN001
    out, lines = hook("afterEach", {"test": {"description": "C01 copy", "metadata": {"id": "C01"}}, "result": ROW},
                      {"AGENT_EVALS_CASE_LINES": "json", "PORTAL_URL": "http://127.0.0.1:9"})
    assert out is None  # nothing to add: the provider already abandoned the row's PR
    (line,) = [json.loads(x[len("@@agent-evals "):]) for x in lines if x.startswith("@@agent-evals ")]
    # the first failing entry, as the report picks it, whole (the runner fits it on the line as the report does)
    assert line == {"id": "C01", "status": "FAIL", "description": "C01 copy", "latency_ms": 2340,
                    "reason": "tool_sequence in_order: missing\nmore", "error_kind": None, "provider": "spoke",
                    "not_graded": 0}


def test_after_each_cleans_a_row_the_provider_could_not(tmp_path) -> None:  # noqa: ANN001
    row = {"failureReason": 2, "error": "[timeout] …", "response": {"metadata": {"trace": {"eval_id": "run-1",
                                                                                        "test_id": "C02#ab"}}}}
    out, lines = hook("afterEach", {"test": {"description": "C02 x"}, "result": row},
                      {"PORTAL_URL": "http://127.0.0.1:9", "AGENT_EVALS_PACK": "spoke",
                       "PROMPTFOO_PYTHON": str(PROJECT_ROOT / ".venv/bin/python")})
    assert "not reachable" in out["result"]["metadata"]["cleanup"]["error"]  # tried, through Python, and said why
    assert any(line.startswith("C02 x ERROR") for line in lines)


def test_after_each_leaves_cleanup_alone_when_no_run_of_the_kit_named_a_pack(tmp_path) -> None:  # noqa: ANN001
    row = {"failureReason": 2, "error": "[timeout] …", "response": {"metadata": {"trace": {"eval_id": "run-1",
                                                                                        "test_id": "C02#ab"}}}}
    out, _ = hook("afterEach", {"test": {"description": "C02 x"}, "result": row},
                  {"PORTAL_URL": "http://127.0.0.1:9", "PROMPTFOO_PYTHON": "/nonexistent/python"})
    assert out is None  # no beforeAll of the kit ran (no AGENT_EVALS_PACK): nothing to undo through, no Python started


STATEMENTS = {"type": "python", "value": "file://../../assertions/expected_statements.py", "metric": "statements",
              "config": {"statements": ["It says so"]}}
GOAL_TEST = {"description": "C01 x", "metadata": {"id": "C01"}, "vars": {"simulated_user": {"goal": "Get a copy"}},
             "assert": [STATEMENTS]}
GRADER = {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "AGENT_MODEL": "m"}


def test_judged_checks_without_a_judge_are_taken_out_and_listed_as_not_graded() -> None:
    test = hook("beforeEach", {"test": GOAL_TEST})[0]["test"]
    assert test["metadata"]["not_graded"] == [
        "expected_statements (statements): no judge model is configured (JUDGE_MODEL and an LLM endpoint)"
    ]
    assert test["assert"] == []


def test_with_a_judge_the_judged_checks_stay_and_no_entry_is_added_for_the_informative_goal() -> None:
    """The provider grades the informative goal_reached itself; afterEach makes it a named score, never an
    assertion (a weight-0 one would read as passed whatever the verdict)."""
    test = hook("beforeEach", {"test": GOAL_TEST}, GRADER)[0]["test"]
    assert "not_graded" not in test["metadata"]
    [listed] = test["assert"]
    assert listed["type"] == "javascript" and listed["value"].endswith("assertions/kit.js:expected_statements")


def _cassette(folder, case: str, roles: list[str]) -> None:  # noqa: ANN001
    folder.mkdir(parents=True, exist_ok=True)
    calls = [{"role": r, "response": {"content": "x"}} for r in roles]
    (folder / f"{case}.json").write_text(json.dumps({"format": "agent-evals/cassette@2", "case_id": case,
                                                     "model_calls": calls}))


def test_a_replay_grades_the_judged_checks_of_cases_whose_cassettes_hold_judge_replies(tmp_path) -> None:  # noqa: ANN001
    _cassette(tmp_path, "C01", ["user", "agent", "judge"])
    _cassette(tmp_path, "C02", ["user", "agent"])
    env = {"AGENT_EVALS_REPLAY_DIR": str(tmp_path)}  # no judge model at all: the recording has the replies
    graded = hook("beforeEach", {"test": GOAL_TEST}, env)[0]["test"]
    assert [a["value"].rsplit(":", 1)[1] for a in graded["assert"]] == ["expected_statements"]
    other = {**GOAL_TEST, "description": "C02 y", "metadata": {"id": "C02"}}
    test = hook("beforeEach", {"test": other}, {**env, **GRADER})[0]["test"]  # a live judge does not answer a replay
    assert test["metadata"]["not_graded"] == [
        "expected_statements (statements): the case's cassette holds no judge replies (it was recorded without a judge)"
    ]


def test_after_each_gives_an_informative_goal_its_named_score() -> None:
    checks = [{"name": "goal_reached", "informative": True, "score": 0.0, "pass": False},
              {"name": "expected_statements", "score": 1.0, "pass": True}]
    row = {**ROW, "response": {"metadata": {**ROW["response"]["metadata"], "checks": checks}}}
    out, _ = hook("afterEach", {"test": {"description": "C01 copy"}, "result": row}, {"PORTAL_URL": "http://127.0.0.1:9"})
    assert out == {"result": {"namedScores": {"goal_reached": 0.0}}}


def test_an_informative_check_that_was_not_graded_gets_no_named_score() -> None:
    checks = [{"name": "goal_reached", "informative": True, "score": 0.0, "pass": True, "not_graded": True}]
    row = {**ROW, "response": {"metadata": {**ROW["response"]["metadata"], "checks": checks}}}
    out, _ = hook("afterEach", {"test": {"description": "C01 copy"}, "result": row}, {"PORTAL_URL": "http://127.0.0.1:9"})
    assert out is None  # its 0 would read as "not reached"


def _line(row: dict[str, Any]) -> dict[str, Any]:
    _, lines = hook("afterEach", {"test": {"description": "C01 copy", "metadata": {"id": "C01"}}, "result": row},
                    {"AGENT_EVALS_CASE_LINES": "json", "PORTAL_URL": "http://127.0.0.1:9"})
    (line,) = [json.loads(x[len("@@agent-evals "):]) for x in lines if x.startswith("@@agent-evals ")]
    return line


def test_the_case_line_says_invalid_and_incomplete() -> None:
    invalid = {"failureReason": 2, "error": "[user_simulator] invalid: C01 turn 2, the user invented region 'westus9'",
               "response": {"metadata": {"case_id": "C01", "cleanup": {"undone": []}, "user_review": {"invalid": True}}}}
    line = _line(invalid)
    assert line["status"] == "INVALID" and line["reason"].startswith("[user_simulator] invalid: C01 turn 2")
    down = {**invalid, "error": "[user_simulator] the simulated user's model failed",
            "response": {"metadata": {"case_id": "C01", "cleanup": {"undone": []}}}}
    assert _line(down)["status"] == "ERROR"  # the user's model down is an error, not an invalid row
    ungraded = {**ROW, "gradingResult": {"componentResults": [
        {"pass": True, "reason": "tool_sequence: ok"}, {"pass": False, "reason": "NOT GRADED: goal_reached: the judge's …"}]}}
    line = _line(ungraded)
    assert line["status"] == "INCOMPLETE" and line["reason"].startswith("NOT GRADED: goal_reached")
    assert _line(ROW)["status"] == "FAIL"  # a real failure beside a NOT GRADED entry decides


def _before_all_with_handoff(send: Callable[[SystemHandoff], None], env: dict[str, str]) -> tuple[int, str]:
    """beforeAll under the kit's runner, the system handed over as the runner does (``SystemHandoff``),
    once the hook is seen waiting: still pending when a timer set after the call fires (a hook that
    did not wait would have settled first, in the microtasks before any timer)."""
    script = (
        "const k = require('./hooks/kit.js'); let settled = false;"
        "k.beforeAll({}).then(() => console.log('ENV ' + JSON.stringify({url: process.env.PORTAL_URL || null,"
        " token: process.env.PORTAL_TOKEN || null, fd: process.env.AGENT_EVALS_SYSTEM_FD || null})),"
        " (e) => { console.log('THROWN ' + e.message); process.exitCode = 3; })"
        ".finally(() => { settled = true; });"
        "setTimeout(() => console.log(settled ? 'SETTLED' : 'PENDING'), 0);"
    )
    handoff = SystemHandoff()
    base = {"PATH": "/usr/bin:/bin", "AGENT_EVALS_RUN_ID": "run-1", "AGENT_EVALS_PACK": "spoke", **env,
            **handoff.env()}
    try:
        node = subprocess.Popen([str(NODE), "-e", script], cwd=PROJECT_ROOT, env=base, stdout=subprocess.PIPE,
                                text=True, pass_fds=handoff.pass_fds)
        handoff.spawned()
        assert node.stdout is not None
        assert node.stdout.readline() == "PENDING\n"  # on the pipe: Promptfoo's start overlaps the system's
        send(handoff)
        out, _ = node.communicate(timeout=30)
    finally:
        handoff.close()
    return node.returncode, out


def test_before_all_under_the_runner_waits_for_the_system_and_gives_its_env_to_the_workers() -> None:
    code, out = _before_all_with_handoff(lambda h: h.give({"PORTAL_URL": "http://127.0.0.1:8400"},
                                                          ["PORTAL_URL", "PORTAL_TOKEN"]),
                                         {"PORTAL_URL": "http://stale", "PORTAL_TOKEN": "stale-token"})
    assert code == 0, out
    # the runner's stale token is gone (this portal has none), and the workers get no pipe number
    assert json.loads(out.split("ENV ", 1)[1]) == {"url": "http://127.0.0.1:8400", "token": None, "fd": None}


@pytest.mark.parametrize(
    ("send", "said"),
    [
        (lambda h: h.refuse("the portal for spoke-create did not start: x"),
         "agent-evals: the portal for spoke-create did not start: x"),
        (lambda h: h.close(),
         "agent-evals: the runner closed the system's pipe without a word (did it stop?)"),
    ],
)
def test_before_all_throws_when_the_runner_has_no_system(send: Callable[[SystemHandoff], None],
                                                         said: str) -> None:
    code, out = _before_all_with_handoff(send, {})
    assert code == 3 and f"THROWN {said}" in out, out


def test_before_all_under_the_runner_without_a_pipe_returns_at_once() -> None:
    """A runner that started Promptfoo after the system (a suite without this hook's beforeAll) gives
    the env itself; the hook does not wait."""
    out, _ = hook("beforeAll", {}, {"AGENT_EVALS_RUN_ID": "run-1", "AGENT_EVALS_PACK": "spoke"})
    assert out is None
