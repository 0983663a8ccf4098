"""input_diff: expected changes, removals, collateral changes, ignore paths, source by name."""

from __future__ import annotations

import copy

import pytest

from agent_evals.packs.spoke.checks.input_diff import grade, spoke_resource

from ._assertion_support import call, metadata, snapshot

C = "create_spoke_pull_request"
SOURCE = {
    "name": "billing",
    "owner": "team-a",
    "settings": {"retries": 3, "timeout": 10, "regions": ["eu", "us"]},
    "routes": [{"path": "/a", "methods": ["GET"]}, {"path": "/b", "methods": ["GET", "POST"]}],
    "meta": {"updated": "2024-01-01"},
}


def submitted(edit=None, **extra: object) -> dict:
    config = copy.deepcopy(SOURCE)
    if edit:
        edit(config)
    return metadata(
        [call("get_spoke", {"name": "billing"}), call(C, {"spoke_name": "billing", "config": config}, turn=2)],
        **extra,
    )


def set_retries(config: dict) -> None:
    config["settings"]["retries"] = 5


def grade_inline(expected: dict, data: dict, **extra: object) -> dict:
    return grade({"source": SOURCE, "expected_changes": expected, **extra}, data)


CASES = [
    # name, expected_changes, edit, passes, made fraction, no collateral changes (1.0 / 0.0), reason fragment
    (
        "exact change",
        {"/settings/retries": 5},
        set_retries,
        True,
        1.0,
        1.0,
        "input_diff: all 1 expected change(s) made, no other changes",
    ),
    (
        "numeric equivalence",
        {"/settings/retries": 5.0},
        set_retries,
        True,
        1.0,
        1.0,
        "all 1 expected change(s) made",
    ),
    ("no change expected", {}, None, True, 1.0, 1.0, "no change expected, none made"),
    (
        "missing change",
        {"/settings/retries": 5},
        None,
        False,
        0.0,
        1.0,
        "missing changes (still as in the source):\n  /settings/retries: expected 5, still 3",
    ),
    (
        "wrong value",
        {"/settings/retries": 4},
        set_retries,
        False,
        0.0,
        1.0,
        "wrong values:\n  /settings/retries: expected 4, got 5",
    ),
    (
        "unexpected change",
        {},
        set_retries,
        False,
        1.0,
        0.0,
        "0 of 0 expected change(s) made, 1 unexpected change(s)",
    ),
    (
        "unexpected change in a nested list",
        {"/settings/retries": 5},
        lambda c: (set_retries(c), c["routes"][1]["methods"].append("DELETE")),
        False,
        1.0,
        0.0,
        'unexpected changes (- removed, + added, ~ changed):\n  + /routes/1/methods/2: "DELETE"',
    ),
    (
        "changed element in a nested list",
        {},
        lambda c: c["routes"][0]["methods"].__setitem__(0, "PUT"),
        False,
        1.0,
        0.0,
        '~ /routes/0/methods/0: "GET" → "PUT"',
    ),
    (
        "removal",
        {"/owner": "$removed"},
        lambda c: c.pop("owner"),
        True,
        1.0,
        1.0,
        "all 1 expected change(s) made",
    ),
    (
        "removal not made",
        {"/owner": "$removed"},
        None,
        False,
        0.0,
        1.0,
        '/owner: expected removed, still "team-a"',
    ),
    (
        "removal replaced by a change",
        {"/owner": "$removed"},
        lambda c: c.__setitem__("owner", "b"),
        False,
        0.0,
        1.0,
        '/owner: expected removed, got "b"',
    ),
    (
        "unexpected removal",
        {},
        lambda c: c["settings"].pop("timeout"),
        False,
        1.0,
        0.0,
        "- /settings/timeout: 10",
    ),
    (
        "array element removal",
        {"/settings/regions/0": "$removed"},
        lambda c: c["settings"]["regions"].pop(0),
        True,
        1.0,
        1.0,
        "all 1 expected change(s) made",
    ),
    (
        "subtree value",
        {"/settings/regions": ["eu"]},
        lambda c: c["settings"]["regions"].pop(),
        True,
        1.0,
        1.0,
        "all 1 expected change(s) made",
    ),
    (
        "subtree value differs",
        {"/settings/regions": ["eu", "asia"]},
        lambda c: c["settings"]["regions"].pop(),
        False,
        0.0,
        1.0,
        '/settings/regions: expected ["eu", "asia"], got ["eu"]',
    ),
    (
        "added subtree",
        {"/limits": {"rps": 10}},
        lambda c: c.__setitem__("limits", {"rps": 10}),
        True,
        1.0,
        1.0,
        "made",
    ),
    (
        "added subtree with an extra leaf",
        {"/limits": {"rps": 10}},
        lambda c: c.__setitem__("limits", {"rps": 10, "burst": 5}),
        False,
        0.0,
        1.0,
        '/limits: expected {"rps": 10}, got {"rps": 10, "burst": 5}',
    ),
    (
        "bool is not a number",
        {"/settings/retries": 1},
        lambda c: c["settings"].__setitem__("retries", True),
        False,
        0.0,
        1.0,
        "/settings/retries: expected 1, got true",
    ),
]


@pytest.mark.parametrize(
    ("expected", "edit", "passes", "made", "no_collateral", "fragment"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_expected_changes(expected, edit, passes, made, no_collateral, fragment) -> None:
    result = grade_inline(expected, submitted(edit))
    assert result["pass"] is passes, result["reason"]
    assert result["namedScores"] == {"expected_changes_made": made, "no_collateral_changes": no_collateral}
    assert fragment in result["reason"]


def test_full_reason_lists_every_kind_of_problem() -> None:
    def edit(config: dict) -> None:
        config["settings"]["retries"] = 4
        config["settings"]["regions"].append("asia")
        config["meta"]["updated"] = "2025-01-01"

    result = grade_inline(
        {"/settings/retries": 5, "/settings/timeout": 30}, submitted(edit), ignore_paths=["/meta"]
    )
    assert result["reason"] == (
        "input_diff: 0 of 2 expected change(s) made, 1 unexpected change(s) "
        "(submitted: create_spoke_pull_request call 2, turn 2, the only call with a configuration; source: inline object)\n"
        "unexpected changes (- removed, + added, ~ changed):\n"
        '  + /settings/regions/2: "asia"\n'
        "missing changes (still as in the source):\n"
        "  /settings/timeout: expected 30, still 10\n"
        "wrong values:\n"
        "  /settings/retries: expected 5, got 4"
    )
    assert result["score"] == 0.0


@pytest.mark.parametrize("ignore", [["/meta"], ["/meta/updated"], ["/*/updated"], ["*updated"]])
def test_ignore_paths_prefixes_and_globs(ignore: list[str]) -> None:
    data = submitted(lambda c: (set_retries(c), c["meta"].__setitem__("updated", "x")))
    result = grade_inline({"/settings/retries": 5}, data, ignore_paths=ignore)
    assert result["pass"] is True, result["reason"]


def test_ignore_prefix_is_whole_tokens() -> None:
    data = submitted(lambda c: c["meta"].__setitem__("updated", "x"))
    assert grade_inline({}, data, ignore_paths=["/me"])["pass"] is False


def test_score_counts_made_against_expected_plus_collateral() -> None:
    data = submitted(lambda c: (set_retries(c), c.__setitem__("owner", "x")))
    result = grade_inline({"/settings/retries": 5}, data)
    assert result["pass"] is False
    assert result["score"] == 0.5


def test_last_successful_call_is_used() -> None:
    good = copy.deepcopy(SOURCE)
    good["settings"]["retries"] = 5
    bad = copy.deepcopy(SOURCE)
    data = metadata(
        [
            call(C, {"config": copy.deepcopy(SOURCE)}, is_error=True),
            call(C, {"config": good}, turn=2),
            call(C, {"config": bad}, turn=3, is_error=True),  # an erroring retry changes nothing
        ]
    )
    result = grade_inline({"/settings/retries": 5}, data)
    assert result["pass"] is True
    assert "call 2, turn 2, the last successful of 3 calls with a configuration" in result["reason"]


def test_config_given_as_json_string_and_unusable_calls() -> None:
    import json

    config = copy.deepcopy(SOURCE)
    set_retries(config)
    data = metadata([call(C, {"config": json.dumps(config)})])
    result = grade_inline({"/settings/retries": 5}, data)
    assert result["pass"] is True and "parsed from a JSON string" in result["reason"]
    data = metadata([call(C, None, raw="{oops"), call(C, {"title": "x"}, turn=2)])
    assert grade_inline({}, data)["reason"] == (
        "input_diff: create_spoke_pull_request was called 2 time(s) but no call had an object in argument 'config' "
        "(call 1, turn 1: arguments were not a JSON object; call 2, turn 2: no 'config' (arguments: title))"
    )
    assert grade_inline({}, metadata([call("get_spoke")]))["reason"] == (
        "input_diff: create_spoke_pull_request was never called, so there is no submitted configuration "
        "(calls: get_spoke)"
    )


def test_custom_tool_and_argument() -> None:
    data = metadata([call("update_spoke", {"body": copy.deepcopy(SOURCE)})])
    assert grade({"source": SOURCE, "expected_changes": {}, "tool": "update_*", "argument": "body"}, data)[
        "pass"
    ]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"expected_changes": {}},
            "config.source is missing: give a spoke name (read through the portal) or an inline configuration object",
        ),
        ({"source": 3, "expected_changes": {}}, "config.source must be a spoke name or an object, got int 3"),
        (
            {"source": SOURCE},
            "config.expected_changes is missing: give an object {JSON Pointer: value or '$removed'}",
        ),
        ({"source": SOURCE, "expected_changes": ["/a"]}, "config.expected_changes must be an object"),
        (
            {"source": SOURCE, "expected_changes": {"settings/retries": 5}},
            "config.expected_changes: 'settings/retries' is not a JSON Pointer (it must start with '/')",
        ),
        (
            {"source": SOURCE, "expected_changes": {"": "$removed"}},
            "the whole document ('') cannot be $removed",
        ),
        (
            {"source": SOURCE, "expected_changes": {"/nope": "$removed"}},
            "config.expected_changes cannot apply to the source (inline object): '/nope' is $removed but the source has no /nope",
        ),
        (
            {"source": SOURCE, "expected_changes": {"/name/x": 1}},
            "config.expected_changes cannot apply to the source (inline object): '/name/x': /name is not an object or array",
        ),
        (
            {"source": SOURCE, "expected_changes": {}, "ignore_paths": ["meta"]},
            "config.ignore_paths: 'meta' is neither a JSON Pointer (starting with '/') nor a glob",
        ),
        ({"source": SOURCE, "expected_changes": {}, "ignore": ["/meta"]}, "unknown config key 'ignore'"),
    ],
)
def test_malformed_config(config: dict, message: str) -> None:
    result = grade(config, submitted())
    assert result["pass"] is False
    assert result["reason"].startswith("input_diff: invalid config: ")
    assert message in result["reason"]


BILLING = snapshot(spokes={"billing": SOURCE, "gone": None})


def test_source_by_name_from_the_snapshot() -> None:
    config = {"source": "billing", "expected_changes": {"/settings/retries": 5}}
    result = grade(config, submitted(set_retries, snapshot=BILLING))
    assert result["pass"] is True, result["reason"]
    assert result["reason"] == (
        "input_diff: all 1 expected change(s) made, no other changes (submitted: create_spoke_pull_request "
        "call 2, turn 2, the only call with a configuration; source: spoke 'billing' from the portal)"
    )
    assert result["namedScores"] == {"expected_changes_made": 1.0, "no_collateral_changes": 1.0}
    # the same source, compared by name, still catches a wrong submission
    result = grade(config, submitted(lambda c: c.__setitem__("owner", "x"), snapshot=BILLING))
    assert result["pass"] is False
    assert result["namedScores"] == {"expected_changes_made": 0.0, "no_collateral_changes": 0.0}
    assert '~ /owner: "team-a" → "x"' in result["reason"]
    assert "/settings/retries: expected 5, still 3" in result["reason"]


def test_source_recorded_as_missing_does_not_exist() -> None:
    result = grade({"source": "gone", "expected_changes": {}}, submitted(snapshot=BILLING))
    assert result == {
        "pass": False,
        "score": 0.0,
        "reason": "input_diff: spoke 'gone' does not exist in the test repository (portal answered 404)",
    }


def test_source_not_in_the_snapshot() -> None:
    result = grade({"source": "payments", "expected_changes": {}}, submitted(snapshot=BILLING))
    assert result["pass"] is False
    assert result["reason"] == (
        "input_diff: spoke 'payments' is not in the end-state snapshot (the provider reads the sources the "
        "case's input_diff assertions name when the conversation ends)"
    )


def test_source_without_a_configuration_object() -> None:
    data = submitted(snapshot=snapshot(resources={spoke_resource("billing"): {"name": "billing", "config": []}}))
    result = grade({"source": "billing", "expected_changes": {}}, data)
    assert result["pass"] is False
    assert result["reason"] == "input_diff: the portal's spoke 'billing' has no configuration object"


def test_source_by_name_needs_a_snapshot() -> None:
    result = grade({"source": "billing", "expected_changes": {}}, submitted())
    assert result["pass"] is False
    assert result["reason"] == (
        "input_diff: the metadata has no end-state snapshot ('snapshot'): the provider takes one when the "
        "conversation ends; this row comes from another provider or an older kit"
    )
    # an inline source needs none
    assert grade({"source": SOURCE, "expected_changes": {}}, submitted())["pass"] is True


def test_grading_never_calls_the_portal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORTAL_URL", "http://127.0.0.1:9")  # nothing listens there
    assert grade({"source": "billing", "expected_changes": {}}, submitted(snapshot=BILLING))["pass"] is True
    monkeypatch.delenv("PORTAL_URL")
    assert grade({"source": "billing", "expected_changes": {}}, submitted(snapshot=BILLING))["pass"] is True
