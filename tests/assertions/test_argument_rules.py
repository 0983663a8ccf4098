"""argument_match's new rules, each with passing and failing vectors: default values, ignored
paths, numeric tolerance, the "within the reference" mode, several accepted argument sets per
tool, and custom matchers in Python (one that raises fails its check, the others still report)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_evals.assertions.argument_match import grade
from agent_evals.assertions.registry import kit_checks
from agent_evals.provider.grading import grade_checks

from ._assertion_support import call, metadata

T = "search_orders"


def one(arguments: dict[str, Any]) -> dict[str, Any]:
    return metadata([call(T, arguments, turn=1)])


VECTORS = [
    # (config beside tool T, the call's arguments, passes, a fragment of the reason)
    # defaults: a key the call adds with its default value is not extra; a key left out equals its default
    ({"mode": "exact", "args": {"order_id": "1"}, "defaults": {"page": 1}}, {"order_id": "1", "page": 1}, True,
     "defaults /page=1"),
    ({"mode": "exact", "args": {"order_id": "1"}, "defaults": {"page": 1}}, {"order_id": "1", "page": 2}, False,
     "/page: expected (absent), got 2 (unexpected key)"),
    ({"args": {"order_id": "1", "page": 1}, "defaults": {"page": 1}}, {"order_id": "1"}, True, "matches"),
    ({"args": {"order_id": "1", "page": 3}, "defaults": {"page": 1}}, {"order_id": "1"}, False,
     "/page: expected 3, got (absent) (missing key)"),
    ({"mode": "exact", "args": {"sort": {"by": "date"}}, "defaults": {"/sort/order": "desc"}},
     {"sort": {"by": "date", "order": "desc"}}, True, "matches"),
    # ignore: a path (or a top-level key, globs allowed) is left out on both sides
    ({"mode": "exact", "args": {"order_id": "1"}, "ignore": ["request_id"]}, {"order_id": "1", "request_id": "x9"},
     True, "ignoring /request_id"),
    ({"mode": "exact", "args": {"order_id": "1"}, "ignore": ["*_token"]}, {"order_id": "1", "page_token": "t"}, True,
     "matches"),
    ({"args": {"items": [{"id": 1, "qty": 2}]}, "ignore": ["/items/*/id"]}, {"items": [{"id": 7, "qty": 2}]}, True,
     "matches"),
    ({"args": {"items": [{"id": 1, "qty": 2}]}, "ignore": ["/items/*/id"]}, {"items": [{"id": 7, "qty": 3}]}, False,
     "/items/0/qty: expected 2, got 3"),
    # tolerance: numbers within it are equal
    ({"args": {"amount": 10.0}, "tolerance": 0.01}, {"amount": 10.005}, True, "tolerance 0.01"),
    ({"args": {"amount": 10.0}, "tolerance": 0.01}, {"amount": 10.02}, False,
     "/amount: expected 10.0, got 10.02 (beyond the tolerance)"),
    ({"args": {"amount": 200}, "tolerance": {"relative": 0.01}}, {"amount": 201.5}, True, "matches"),
    ({"args": {"amount": 200}, "tolerance": {"relative": 0.01}}, {"amount": 203}, False, "beyond the tolerance"),
    # within: the call's arguments lie within the reference (agentevals' "subset" argument mode)
    ({"mode": "within", "args": {"flight_no": "LX0112", "foo": "bar"}}, {"flight_no": "LX0112"}, True, "matches"),
    ({"mode": "within", "args": {"flight_no": "LX0112"}}, {"flight_no": "LX0112", "is_cool": True}, False,
     "/is_cool: expected (absent), got true (not in the reference)"),
    ({"mode": "within", "args": {"flight_no": "LX0112"}}, {"flight_no": "LX0113"}, False,
     '/flight_no: expected "LX0112", got "LX0113"'),
    # several accepted argument sets: a call matches when it matches one
    ({"args": [{"city": "London"}, {"city": "SF"}]}, {"city": "SF"}, True, "matches"),
    ({"args": [{"city": "London"}, {"city": "SF"}]}, {"city": "Paris"}, False,
     '/city: expected "London", got "Paris"'),
    ({"mode": "within", "occurrence": "all", "args": [{"city": "London"}, {"city": "SF"}]}, {"city": "SF"}, True,
     "every call"),
    # custom matchers in Python: one path, or the whole arguments
    ({"args": {"city": "San Francisco"}, "matchers": {"city": "tests.assertions.kit_matchers:same_city"}},
     {"city": "SF"}, True, "matcher /city=tests.assertions.kit_matchers:same_city"),
    ({"args": {"city": "San Francisco"}, "matchers": {"city": "tests.assertions.kit_matchers:same_city"}},
     {"city": "Oakland"}, False, "/city: expected \"San Francisco\", got \"Oakland\" "
     "(tests.assertions.kit_matchers:same_city said no)"),
    ({"args": {"query": "can I upgrade?"}, "matcher": "tests.assertions.kit_matchers:mentions_upgrade"},
     {"query": "upgrade to first class"}, True, "matches"),
    ({"args": {"query": "can I upgrade?"}, "matcher": "tests.assertions.kit_matchers:mentions_upgrade"},
     {"query": "flight time"}, False, "(tests.assertions.kit_matchers:mentions_upgrade: the query must mention an upgrade)"),
]


@pytest.mark.parametrize(("config", "arguments", "passes", "fragment"), VECTORS)
def test_argument_rules(config: dict[str, Any], arguments: dict[str, Any], passes: bool, fragment: str) -> None:
    result = grade({"tool": T, **config}, one(arguments))
    assert result["pass"] is passes, result["reason"]
    assert fragment in result["reason"]


def test_a_matcher_from_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_matchers.py").write_text("def caseless(a, e):\n    return str(a).lower() == str(e).lower()\n")
    monkeypatch.chdir(tmp_path)
    config = {"tool": T, "args": {"city": "sf"}, "matchers": {"city": "my_matchers.py:caseless"}}
    assert grade(config, one({"city": "SF"}))["pass"] is True
    assert grade(config, one({"city": "LA"}))["pass"] is False


def test_a_matcher_that_raises_fails_its_check_and_the_others_still_report() -> None:
    asserts = [
        {"type": "python", "value": "file://assertions/argument_match.py", "metric": "city",
         "config": {"tool": T, "args": {"city": "SF"}, "matchers": {"city": "tests.assertions.kit_matchers:broken"}}},
        {"type": "python", "value": "file://assertions/tool_sequence.py", "metric": "sequence",
         "config": {"expected": [T]}},
    ]
    results = grade_checks(kit_checks(asserts), asserts, one({"city": "SF"}))
    assert [r["pass"] for r in results] == [False, True]
    assert results[0]["reason"].endswith(
        ": the matcher tests.assertions.kit_matchers:broken raised RuntimeError: the matcher's own bug"
    )
    assert results[1]["reason"].startswith("tool_sequence in_order: expected search_orders")


def test_without_rules_the_old_verdicts_stand() -> None:
    assert grade({"tool": T, "args": {"a": 1}}, one({"a": 1, "b": 2}))["pass"] is True
    assert grade({"tool": T, "args": {"a": 1}, "mode": "exact"}, one({"a": 1, "b": 2}))["pass"] is False
