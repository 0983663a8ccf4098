"""Vectors of two peers' own test suites, mapped onto the kit's checks: langchain-ai/agentevals
(python/tests/test_trajectory.py: trajectory match modes, tool_args_match_mode, overrides) and
Promptfoo (test/assertions/trajectory.test.ts: trajectory:tool-args-match, tool-sequence, not-).

Each vector gives the peer's verdict and the kit's. Where they differ the difference is by
design, its reason is given here and the vector is listed in docs/assertions.md ("Against the
peers"). agentevals matches names and arguments in one evaluator; the kit splits them into
tool_sequence (names; "ignore" argument mode) and argument_match (arguments), so some vectors
map onto both.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from agent_evals.assertions.registry import check_module
from tests.conftest import PROJECT_ROOT

from ._assertion_support import call, metadata


class Vector(NamedTuple):
    id: str
    check: str
    config: dict[str, Any]
    calls: list[tuple[str, dict[str, Any]]]
    kit: bool
    peer: bool
    negated: bool = False
    differs: str | None = None  # why, when kit != peer


SF, LONDON = ("get_weather", {"city": "SF"}), ("get_weather", {"city": "London"})
FLIGHT = ("get_flight_info", {"flight_no": "LX0112"})
ORDERS = ("search_orders", {"order_id": "123", "include_history": False})


def seq(expected: list[str], mode: str) -> dict[str, Any]:
    return {"expected": expected, "mode": mode}


VECTORS = [
    # agentevals: test_trajectory_match (the same call on both sides), every trajectory mode
    *[Vector(f"ae-match-{m}", "tool_sequence", seq(["get_weather"], m), [SF], True, True)
      for m in ("strict", "unordered", "superset", "subset")],
    Vector("ae-match-args-exact", "argument_match", {"tool": "get_weather", "args": {"city": "SF"}, "mode": "exact"},
           [SF], True, True),
    # agentevals: test_trajectory_subset_tool_call (output SF; reference London and SF)
    Vector("ae-subset-unordered", "tool_sequence", seq(["get_weather", "get_weather"], "unordered"), [SF], False, False),
    Vector("ae-subset-superset", "tool_sequence", seq(["get_weather", "get_weather"], "superset"), [SF], False, False),
    Vector("ae-subset-subset", "tool_sequence", seq(["get_weather", "get_weather"], "subset"), [SF], True, True),
    Vector("ae-subset-strict", "tool_sequence", seq(["get_weather", "get_weather"], "strict"), [SF], False, False),
    Vector("ae-subset-args", "argument_match",  # several reference argument sets for one tool, in subset mode
           {"tool": "get_weather", "args": [{"city": "London"}, {"city": "SF"}], "mode": "within", "occurrence": "all"},
           [SF], True, True),
    Vector("ae-subset-args-unknown", "argument_match",
           {"tool": "get_weather", "args": [{"city": "London"}, {"city": "SF"}], "mode": "within", "occurrence": "all"},
           [SF, ("get_weather", {"city": "Paris"})], False, False),
    # agentevals: test_exact_matcher_with_different_called_tools
    *[Vector(f"ae-other-tool-{m}", "tool_sequence", seq(["accuweather_forecast"], m), [SF], False, False)
      for m in ("strict", "unordered", "superset", "subset")],
    # agentevals: test_trajectory_with_extra_tool_calls_and_override (get_weather's arguments ignored)
    *[Vector(f"ae-extra-ignored-{m}", "tool_sequence", seq(["get_weather"], m), [SF, LONDON], ok, ok)
      for m, ok in (("unordered", False), ("superset", True), ("subset", False), ("strict", False))],
    # agentevals: test_trajectory_with_subset_tool_calls_and_override
    *[Vector(f"ae-fewer-ignored-{m}", "tool_sequence", seq(["get_weather", "get_weather"], m),
             [("get_weather", {"city": "SF and London"})], ok, ok)
      for m, ok in (("unordered", False), ("superset", False), ("subset", True), ("strict", False))],
    # agentevals: test_tool_args_match_mode_superset (output has an extra key)
    *[Vector(f"ae-args-superset-{m}", "argument_match", {"tool": "get_flight_info", "args": a, "mode": m},
             [("get_flight_info", {"is_cool": True, "flight_no": "LX0112"})], ok, ok)
      for m, a, ok in (("exact", {"flight_no": "LX0112"}, False), ("subset", {}, True),  # ignore: any arguments
                       ("within", {"flight_no": "LX0112"}, False),  # agentevals "subset"
                       ("subset", {"flight_no": "LX0112"}, True))],  # agentevals "superset"
    # agentevals: test_tool_args_match_mode_subset (the reference has an extra key)
    *[Vector(f"ae-args-subset-{m}", "argument_match",
             {"tool": "get_flight_info", "args": {"flight_no": "LX0112", "foo": "bar"} if m != "ignore" else {},
              "mode": "subset" if m == "ignore" else m}, [FLIGHT], ok, ok)
      for m, ok in (("exact", False), ("ignore", True), ("within", True), ("subset", False))],
    # agentevals: test_tool_args_match_mode_exact
    *[Vector(f"ae-args-exact-{m}", "argument_match", {"tool": "get_flight_info", "args": {"flight_no": "LX0112"},
                                                      "mode": m}, [FLIGHT], True, True)
      for m in ("exact", "within", "subset")],
    # agentevals: test_trajectory_match_with_nested_field_overrides (match on time.start only)
    Vector("ae-nested-field", "argument_match", {"tool": "lookup_policy", "args": {"time": {"start": "10:00"}}},
           [("lookup_policy", {"query": "upgrade", "time": {"start": "10:00", "end": "11:00"}})], True, True),
    # agentevals: test_trajectory_match_with_overrides (a custom matcher of the whole arguments)
    Vector("ae-custom-matcher", "argument_match",
           {"tool": "lookup_policy", "args": {"query": "upgrade to first class"},
            "matcher": "tests.assertions.kit_matchers:mentions_upgrade"},
           [("lookup_policy", {"query": "upgrade policy"})], True, True),
    # by design: the kit compares nested values recursively (agentevals compares top-level values with ==)
    Vector("ae-nested-subset", "argument_match", {"tool": "t", "args": {"a": {"x": 1}}}, [("t", {"a": {"x": 1, "y": 2}})],
           True, False, differs="argument_match compares nested objects recursively in subset mode; agentevals "
           "compares each top-level value with ==, so an extra nested key fails there"),
    # by design: a boolean is not a number (Python's True == 1)
    Vector("ae-bool-number", "argument_match", {"tool": "t", "args": {"flag": 1}, "mode": "exact"}, [("t", {"flag": True})],
           False, True, differs="true is not 1 in the kit (JSON types); agentevals compares Python values, where True == 1"),
    # Promptfoo: trajectory:tool-args-match (partial by default; the kit's subset)
    Vector("pf-args-partial", "argument_match", {"tool": "search_orders", "args": {"order_id": "123"}}, [ORDERS], True, True),
    Vector("pf-args-no-match", "argument_match", {"tool": "search_orders", "args": {"order_id": "999"}}, [ORDERS],
           False, False),
    Vector("pf-args-missing-tool", "argument_match", {"tool": "missing_tool", "args": {"order_id": "123"}}, [ORDERS],
           False, False),
    Vector("pf-args-inverse", "argument_match", {"tool": "search_orders", "args": {"order_id": "123"}}, [ORDERS],
           False, False, negated=True),
    Vector("pf-args-inverse-missing-tool", "argument_match", {"tool": "missing_tool", "args": {"order_id": "123"}},
           [ORDERS], True, True, negated=True),
    Vector("pf-defaults-extra-key", "argument_match", {"tool": "search_orders", "mode": "exact", "args": {"order_id": "123"},
                                                       "defaults": {"include_history": False}}, [ORDERS], True, True),
    Vector("pf-defaults-other-value", "argument_match", {"tool": "search_orders", "mode": "exact",
                                                         "args": {"order_id": "123"}, "defaults": {"include_history": True}},
           [ORDERS], False, False),
    Vector("pf-defaults-all", "argument_match", {"tool": "orders", "mode": "exact", "args": {"status": "Q"},
                                                 "defaults": {"page": 1, "page_size": 5}},
           [("orders", {"status": "Q", "page": 1, "page_size": 5})], True, True),
    Vector("pf-defaults-omitted", "argument_match", {"tool": "orders", "mode": "exact", "args": {"status": "Q"},
                                                     "defaults": {"page": 1, "page_size": 5}},
           [("orders", {"status": "Q"})], True, True),
    Vector("pf-defaults-hallucinated", "argument_match", {"tool": "orders", "mode": "exact", "args": {"status": "Q"},
                                                          "defaults": {"page": 1}},
           [("orders", {"status": "Q", "page": 1, "delete_database": True})], False, False),
    Vector("pf-defaults-empty", "argument_match", {"tool": "search_orders", "mode": "exact", "args": {"order_id": "123"},
                                                   "defaults": {}}, [ORDERS], False, False),
    Vector("pf-defaults-structured", "argument_match", {"tool": "orders", "mode": "exact", "args": {"status": "Q"},
                                                        "defaults": {"sort": {"field": "created", "order": "desc"}}},
           [("orders", {"status": "Q", "sort": {"field": "created", "order": "desc"}})], True, True),
    Vector("pf-ignore", "argument_match", {"tool": "search_orders", "mode": "exact", "args": {"order_id": "123"},
                                           "ignore": ["include_history"]}, [ORDERS], True, True),
    # by design: an argument left out equals its default on either side
    Vector("pf-defaults-expected-default", "argument_match", {"tool": "orders", "args": {"status": "Q", "page": 1},
                                                              "defaults": {"page": 1}}, [("orders", {"status": "Q"})],
           True, False, differs="a default is what the tool uses when an argument is left out, so the kit applies it to "
           "an expected key the call omits too; Promptfoo strips defaults from the call only"),
    # Promptfoo: trajectory:tool-sequence
    Vector("pf-sequence-in-order", "tool_sequence", seq(["search_orders", "compose_reply"], "in_order"),
           [ORDERS, ("search_inventory", {}), ("compose_reply", {})], True, True),
    Vector("pf-sequence-exact", "tool_sequence", seq(["search_orders", "compose_reply"], "strict"),
           [ORDERS, ("search_inventory", {}), ("compose_reply", {})], False, False),
    # by design: tool names are identifiers (Promptfoo matches names and globs caselessly)
    Vector("pf-name-case", "tool_sequence", seq(["Search_Orders"], "in_order"), [ORDERS], False, True,
           differs="tool names are identifiers: the kit matches them, and their globs, case-sensitively"),
    # by design: Promptfoo refuses an empty sequence; the kit's expected: [] means "no tool call"
    Vector("pf-sequence-empty", "tool_sequence", seq([], "in_order"), [], True, False,
           differs="Promptfoo refuses an empty tool-sequence (a config error); the kit reads expected: [] as "
           "'no tool call' in every mode but superset (which refuses it)"),
]


@pytest.mark.parametrize("vector", VECTORS, ids=[v.id for v in VECTORS])
def test_peer_vector(vector: Vector) -> None:
    row = metadata([call(name, args, turn=1) for name, args in vector.calls])
    result = check_module(vector.check).grade(vector.config, row, negated=vector.negated)
    assert result["pass"] is vector.kit, result["reason"]
    assert (vector.kit == vector.peer) is (vector.differs is None), vector.id


def test_every_difference_by_design_is_listed_in_the_docs() -> None:
    docs = (PROJECT_ROOT / "docs" / "assertions.md").read_text(encoding="utf-8")
    missing = [v.id for v in VECTORS if v.differs is not None and f"`{v.id}`" not in docs]
    assert missing == []
