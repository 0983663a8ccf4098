"""conversation: turns, end, step budget, convergence."""

from __future__ import annotations

import pytest

from agent_evals.assertions.conversation import convergence, grade

from ._assertion_support import call, metadata


def run(steps: int = 3, turns: int = 2, end: str = "done", **extra: object) -> dict:
    return metadata([call("get_spoke") for _ in range(steps)], turns=turns, end=end, **extra)


CASES = [
    # config, metadata, passes, reason
    ({}, run(), True, "conversation: 2 turn(s), ended 'done', 3 tool call(s)"),
    (None, run(), True, "conversation: 2 turn(s), ended 'done', 3 tool call(s)"),
    (
        {"max_turns": 2},
        run(turns=3),
        False,
        "conversation: 3 turns > max_turns 2 (3 turn(s), ended 'done', 3 tool call(s))",
    ),
    (
        {},
        run(end="gave_up"),
        False,
        "conversation: ended 'gave_up', allowed: done (2 turn(s), ended 'gave_up', 3 tool call(s))",
    ),
    (
        {"allowed_ends": ["done", "gave_up"]},
        run(end="gave_up"),
        True,
        "conversation: 2 turn(s), ended 'gave_up', 3 tool call(s)",
    ),
    (
        {},
        run(end="error", error="model timeout"),
        False,
        "conversation: ended 'error', allowed: done (error: model timeout) (2 turn(s), ended 'error', 3 tool call(s))",
    ),
    (
        {},
        run(end="max_tool_rounds"),
        False,
        "conversation: ended 'max_tool_rounds', allowed: done (2 turn(s), ended 'max_tool_rounds', 3 tool call(s))",
    ),
    (
        {"allowed_ends": ["done", "max_turns"]},
        run(end="max_turns", turns=4),
        True,
        "conversation: 4 turn(s), ended 'max_turns', 3 tool call(s)",
    ),
    (
        {"max_tool_calls": 2},
        run(steps=3),
        False,
        "conversation: 3 tool calls > max_tool_calls 2 (2 turn(s), ended 'done', 3 tool call(s))",
    ),
    (
        {"max_tool_calls": 3, "expected_steps": 3},
        run(steps=3),
        True,
        "conversation: 2 turn(s), ended 'done', 3 tool call(s), convergence 1.00 (3 expected steps)",
    ),
]


@pytest.mark.parametrize(("config", "data", "passes", "reason"), CASES)
def test_conversation(config: dict | None, data: dict, passes: bool, reason: str) -> None:
    result = grade(config, data)
    assert result["pass"] is passes
    assert result["reason"] == reason


@pytest.mark.parametrize(
    # no call at all although steps were expected: not converged (it once read 1.0)
    ("expected", "actual", "value"), [(3, 3, 1.0), (3, 6, 0.5), (3, 2, 1.0), (2, 0, 0.0)]
)
def test_convergence(expected: int, actual: int, value: float) -> None:
    assert convergence(expected, actual) == value


def test_convergence_is_the_named_score_and_the_score() -> None:
    result = grade({"expected_steps": 3}, run(steps=4))
    assert result["pass"] is True
    assert result["score"] == 0.75
    assert result["namedScores"] == {"convergence": 0.75}
    failed = grade({"expected_steps": 3, "max_tool_calls": 3}, run(steps=4))
    assert (
        failed["pass"] is False and failed["score"] == 0.0 and failed["namedScores"] == {"convergence": 0.75}
    )


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"max_turns": 0}, "config.max_turns must be an integer >= 1, got int 0"),
        ({"max_turns": "3"}, 'config.max_turns must be an integer >= 1, got str "3"'),
        ({"max_tool_calls": 2.5}, "config.max_tool_calls must be an integer >= 0, got float 2.5"),
        ({"expected_steps": True}, "config.expected_steps must be an integer >= 1, got bool true"),
        (
            {"allowed_ends": ["done", "finished"]},
            'config.allowed_ends has list ["finished"], which is not allowed; allowed: done, gave_up, max_turns, max_tool_rounds, max_tokens, error',
        ),
        ({"allowed_ends": []}, "config.allowed_ends must not be empty: give a list of conversation ends"),
        ({"allowed_ends": "done"}, 'config.allowed_ends must be a list of conversation ends, got str "done"'),
        (
            {"maxTurns": 3},
            "unknown config key 'maxTurns'; allowed keys: max_turns, allowed_ends, max_tool_calls, expected_steps",
        ),
    ],
)
def test_malformed_config(config: dict, message: str) -> None:
    assert grade(config, run())["reason"] == f"conversation: invalid config: {message}"
