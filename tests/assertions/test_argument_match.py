"""argument_match: modes, occurrences, value rules and reasons."""

from __future__ import annotations

import pytest

from agent_evals.assertions.argument_match import grade

from ._assertion_support import call, metadata

C = "create_spoke_pull_request"
CONFIG = {"name": "billing", "settings": {"retries": 3, "timeout": 1.5, "enabled": True}, "tags": ["a", "b"]}
ARGS = {"spoke_name": "billing", "config": CONFIG, "title": "Raise retries"}


def one_call(arguments: dict) -> dict:
    return metadata([call(C, arguments, turn=2)])


CASES = [
    # config (tool C), arguments, passes, reason fragment
    ({"args": {"spoke_name": "billing"}}, ARGS, True, "matches (create_spoke_pull_request call 1, turn 2)"),
    ({"args": {"config": {"settings": {"retries": 3}}}}, ARGS, True, "matches"),  # nested subset
    (
        {"args": {"config": {"settings": {"retries": 4}}}},
        ARGS,
        False,
        "/config/settings/retries: expected 4, got 3",
    ),  # wrong nested argument
    ({"args": {"config": {"settings": {"retries": 3.0, "timeout": 1.5}}}}, ARGS, True, "matches"),  # 3 == 3.0
    (
        {"args": {"config": {"settings": {"enabled": 1}}}},
        ARGS,
        False,
        "/config/settings/enabled: expected 1, got true",
    ),  # bool is not a number
    (
        {"args": {"config": {"settings": {"retries": True}}}},
        {"config": {"settings": {"retries": 1}}},
        False,
        "/config/settings/retries: expected true, got 1",
    ),
    (
        {"args": {"config": {"tags": ["a"]}}},
        ARGS,
        False,
        '/config/tags: expected ["a"], got ["a", "b"] (expected 1 items, got 2)',
    ),  # arrays have equal length
    (
        {"args": {"config": {"tags": ["b", "a"]}}},
        ARGS,
        False,
        '/config/tags/0: expected "b", got "a"',
    ),  # in order
    ({"args": {"spoke_name": "BILLING"}}, ARGS, False, '/spoke_name: expected "BILLING", got "billing"'),
    ({"args": {"spoke_name": "BILLING"}, "ignore_case": True}, ARGS, True, "matches"),
    ({"args": {"spoke": "billing"}}, ARGS, False, '/spoke: expected "billing", got (absent) (missing key)'),
    ({"args": {"spoke_name": "billing"}, "mode": "exact"}, ARGS, False, "/config: expected (absent), got"),
    ({"args": ARGS, "mode": "exact"}, ARGS, True, "matches"),
    (
        {
            "args": {"spoke_name": "billing", "title": "Raise retries", "config": {**CONFIG, "extra": 1}},
            "mode": "exact",
        },
        ARGS,
        False,
        "/config/extra: expected 1, got (absent) (missing key)",
    ),
    ({"args": {"n": None}}, {"n": None}, True, "matches"),
    ({"args": {"n": None}}, {"n": 0}, False, "/n: expected null, got 0"),
]


@pytest.mark.parametrize(("config", "arguments", "passes", "fragment"), CASES)
def test_value_rules(config: dict, arguments: dict, passes: bool, fragment: str) -> None:
    result = grade({"tool": C, **config}, one_call(arguments))
    assert result["pass"] is passes, result["reason"]
    assert fragment in result["reason"]


def test_exact_reports_unexpected_keys_at_depth() -> None:
    args = {"config": {"settings": {"retries": 3}}}
    result = grade(
        {"tool": C, "args": args, "mode": "exact"}, one_call({"config": {"settings": {"retries": 3, "x": 1}}})
    )
    assert result["pass"] is False
    assert "/config/settings/x: expected (absent), got 1 (unexpected key)" in result["reason"]


RETRIES = [
    call(C, {"spoke_name": "a"}, turn=1),
    call("get_spoke", {"name": "b"}),
    call(C, {"spoke_name": "b"}, turn=2),
]


@pytest.mark.parametrize(
    ("occurrence", "expected_name", "passes"),
    [
        ("any", "a", True),
        ("any", "b", True),
        ("any", "c", False),
        ("first", "a", True),
        ("first", "b", False),
        ("last", "b", True),
        ("last", "a", False),
        ("all", "a", False),
        ("all", "b", False),
    ],
)
def test_occurrence(occurrence: str, expected_name: str, passes: bool) -> None:
    result = grade(
        {"tool": C, "args": {"spoke_name": expected_name}, "occurrence": occurrence}, metadata(RETRIES)
    )
    assert result["pass"] is passes, result["reason"]


def test_all_reports_each_differing_call() -> None:
    result = grade({"tool": C, "args": {"spoke_name": "a"}, "occurrence": "all"}, metadata(RETRIES))
    assert result["reason"] == (
        'argument_match: create_spoke_pull_request subset {"spoke_name": "a"} (every call): 1 of 2 call(s) differ\n'
        "create_spoke_pull_request (call 3, turn 2):\n"
        '  /spoke_name: expected "a", got "b"'
    )


def test_tool_glob_and_never_called() -> None:
    assert grade({"tool": "create_*", "args": {"spoke_name": "a"}}, metadata(RETRIES))["pass"] is True
    result = grade({"tool": "delete_spoke", "args": {}}, metadata(RETRIES))
    assert result["pass"] is False
    assert result["reason"].endswith(
        "delete_spoke was never called (calls: create_spoke_pull_request ×2, get_spoke)"
    )


def test_unparsed_arguments_are_a_mismatch() -> None:
    data = metadata([call(C, None, raw="{not json")])
    result = grade({"tool": C, "args": {"spoke_name": "a"}}, data)
    assert result["pass"] is False
    assert (
        '/: expected {"spoke_name": "a"}, got "{not json" (the arguments were not a JSON object)'
        in result["reason"]
    )


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"args": {}}, "config.tool is missing: give a tool name or glob"),
        ({"tool": C}, "config.args is missing: give an object of expected arguments, or a list of them"),
        ({"tool": C, "args": ["a"]},
         'config.args must be an object of expected arguments, or a non-empty list of them, got list ["a"]'),
        ({"tool": C, "args": []},
         "config.args must be an object of expected arguments, or a non-empty list of them, got list []"),
        ({"tool": C, "args": {}, "tolerance": -1},
         "config.tolerance must be a number >= 0 (absolute), or {absolute, relative} of numbers >= 0, got int -1"),
        ({"tool": C, "args": {}, "matcher": "no_such_module_xyz:fn"},
         "config.matcher: cannot import no_such_module_xyz: No module named 'no_such_module_xyz'"),
        ({"tool": C, "args": {}, "matchers": {"/a": "json"}},
         "config.matchers./a: 'json' is not module:function (e.g. mymatchers:same_city)"),
        ({"tool": "", "args": {}}, 'config.tool must be a tool name or glob, got str ""'),
        (
            {"tool": C, "args": {}, "mode": "partial"},
            'config.mode is "partial", which is not allowed; allowed: subset, exact, within',
        ),
        (
            {"tool": C, "args": {}, "occurrence": "every"},
            'config.occurrence is "every", which is not allowed; allowed: any, first, last, all',
        ),
        (
            {"tool": C, "args": {}, "ignore_case": "yes"},
            'config.ignore_case must be true or false, got str "yes"',
        ),
    ],
)
def test_malformed_config(config: dict, message: str) -> None:
    result = grade(config, metadata(RETRIES))
    assert result["pass"] is False
    assert result["reason"] == f"argument_match: invalid config: {message}"
