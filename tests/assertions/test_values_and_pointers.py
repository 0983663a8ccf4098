"""values (comparison rules), json_pointer and leaf_diff."""

from __future__ import annotations

import pytest

from agent_evals.assertions import json_pointer as jp
from agent_evals.assertions.expected_changes import ExpectedChange
from agent_evals.assertions.leaf_diff import diff, leaves
from agent_evals.assertions.values import MISSING, compare, render, scalars_equal, values_equal


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (0, 0.0, True),
        (1, 1.5, False),
        (True, 1, False),
        (False, 0, False),
        (1.0, True, False),
        (True, True, True),
        ("a", "A", False),
        (None, None, True),
        (None, 0, False),
        (None, "", False),
        ({}, [], False),
        ([], [], True),
        ({"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2.0}]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),  # values_equal allows no extra keys
    ],
)
def test_values_equal(a: object, b: object, equal: bool) -> None:
    assert values_equal(a, b) is equal
    assert values_equal(b, a) is equal


def test_ignore_case_applies_to_strings_only() -> None:
    assert scalars_equal("Billing", "billING", ignore_case=True)
    assert not scalars_equal("Billing", "billING")
    assert values_equal({"a": ["X"]}, {"a": ["x"]}, ignore_case=True)


def test_compare_lists_every_mismatch_with_its_path() -> None:
    expected = {"a": {"b": [1, 2], "c": "x"}, "d/e": True}
    actual = {"a": {"b": [1, 3], "c": "x"}, "d/e": 1}
    assert [m.describe() for m in compare(expected, actual)] == [
        "/a/b/1: expected 2, got 3",
        "/d~1e: expected true, got 1",
    ]


def test_render_shortens() -> None:
    assert render("x" * 300, limit=10) == '"xxxxxxxx…'
    assert render(MISSING) == "(absent)"


@pytest.mark.parametrize(
    ("pointer", "tokens"),
    [("", []), ("/a", ["a"]), ("/a/0", ["a", "0"]), ("/a~1b/c~0d", ["a/b", "c~d"]), ("/", [""])],
)
def test_parse(pointer: str, tokens: list[str]) -> None:
    assert jp.parse(pointer) == tokens
    assert jp.to_pointer(tokens) == pointer


@pytest.mark.parametrize("bad", ["a", "a/b", "/a~2"])
def test_parse_rejects(bad: str) -> None:
    with pytest.raises(jp.PointerError):
        jp.parse(bad)
    with pytest.raises(jp.PointerError, match="JSON Pointer|bad escape"):  # an expected change is refused when made
        ExpectedChange(bad, 1)


def test_resolve_set_remove() -> None:
    doc = {"a": [{"b": 1}, {"b": 2}]}
    assert jp.resolve(doc, "/a/1/b") == 2
    assert jp.resolve(doc, "/a/2/b", MISSING) is MISSING
    assert jp.resolve(doc, "/a/01", MISSING) is MISSING
    jp.set_value(doc, "/a/2", {"b": 3})  # index == length appends
    jp.set_value(doc, "/x/y", 1)  # missing objects are created
    jp.remove(doc, "/a/0")
    assert doc == {"a": [{"b": 2}, {"b": 3}], "x": {"y": 1}}
    with pytest.raises(jp.PointerError, match="past the end"):
        jp.set_value(doc, "/a/5", 1)
    with pytest.raises(jp.PointerError, match="is not an object or array"):
        jp.set_value(doc, "/x/y/z", 1)
    assert jp.is_within("/a/b", "/a") and not jp.is_within("/ab", "/a") and jp.is_within("/a", "/a")


def test_leaves_include_empty_containers() -> None:
    assert leaves({"a": {}, "b": [], "c": [1, {"d": None}]}) == {
        "/a": {},
        "/b": [],
        "/c/0": 1,
        "/c/1/d": None,
    }


def test_diff_kinds_and_descriptions() -> None:
    before = {"a": 1, "b": {"c": [1, 2]}, "gone": "x", "same": 1}
    after = {"a": 2, "b": {"c": [1, 2, 3]}, "new": True, "same": 1.0}
    assert [change.describe() for change in diff(before, after)] == [
        "~ /a: 1 → 2",
        '- /gone: "x"',
        "+ /b/c/2: 3",
        "+ /new: true",
    ]
