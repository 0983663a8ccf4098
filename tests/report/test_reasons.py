"""The tools and JSON paths named by the failing reasons of the kit's assertions (formats as
the assertions write them: docs/assertions.md and the replayed self-check mutations)."""

from __future__ import annotations

import pytest

from agent_evals.report.reasons import named_in

CASES = [
    # tool_sequence
    (
        "tool_sequence in_order: expected get_spoke → validate_spoke_config → create_spoke_pull_request; actual "
        "validate_spoke_config, get_spoke, create_spoke_pull_request; missing validate_spoke_config after get_spoke "
        "(position 2; it was called earlier, at call 1)",
        ["validate_spoke_config"],
        [],
    ),
    (
        "tool_sequence strict: expected get_spoke → validate_spoke_config; actual get_spoke_schema, get_spoke; "
        "first difference at position 1: expected get_spoke, got get_spoke_schema",
        ["get_spoke", "get_spoke_schema"],
        [],
    ),
    (
        "tool_sequence unordered: expected a, b; actual x, a; missing b; unexpected x (call 1; not expected), "
        "a (call 3; more than the 1 expected)",
        ["b", "x", "a"],
        [],
    ),
    (
        "tool_sequence strict: expected a; actual a, q, r; unexpected q, r from position 2 (expected only 1 call(s))",
        ["q", "r"],
        [],
    ),
    ("tool_sequence superset: expected a ×2, b; actual a; missing a, b", ["a", "b"], []),
    (
        "tool_sequence in_order: expected a → b; actual (no tool calls) (ignored: s ×2); missing a at the start "
        "(position 1); missing b at the start (position 2)",
        ["a", "b"],
        [],
    ),
    # tool_not_executed
    (
        "tool_not_executed: forbidden tool called: complete_pull_request in turn 2 (call 5, the agent loop refused it); "
        "delete_x (matches delete_*) in turn 3 (call 7); forbidden: complete_pull_request, delete_*",
        ["complete_pull_request", "delete_x"],
        [],
    ),
    # argument_match
    (
        'argument_match: create_spoke_pull_request subset {"config": {"location": "westeurope"}} (last call): 1 of 1 '
        'call(s) differ\ncreate_spoke_pull_request (call 3, turn 4):\n  /config/location: expected "westeurope", '
        'got "moon-central"\n  /spoke: expected "a", got (absent) (missing key)',
        ["create_spoke_pull_request"],
        ["/config/location", "/spoke"],
    ),
    (
        'argument_match: t subset {} (any call): 1 of 1 call(s) differ\nt (call 1, turn 1):\n  /: expected {}, got "x" '
        "(the arguments were not a JSON object)",
        ["t"],
        ["/"],
    ),
    (
        "argument_match: create_spoke_pull_request subset {} (last call): create_spoke_pull_request was never called "
        "(calls: get_spoke)",
        ["create_spoke_pull_request"],
        [],
    ),
    # input_diff
    (
        "input_diff: 1 of 2 expected change(s) made, 1 unexpected change(s) (submitted: create_spoke_pull_request call 3, "
        "turn 2, the only call with a configuration; source: spoke 'crm-dev-neu' from the portal)\nunexpected changes "
        '(- removed, + added, ~ changed):\n  + /addressSpace/1: "10.1.0.0/24"\n  ~ /tags/businessUnit: "Finance" → '
        '"Sales"\nmissing changes (still as in the source):\n  /tags/costCenter: expected removed, still "1"\n'
        'wrong values:\n  /tags/owner: expected "a", got "b"',
        ["create_spoke_pull_request"],
        ["/addressSpace/1", "/tags/businessUnit", "/tags/costCenter", "/tags/owner"],
    ),
    (
        "input_diff: create_spoke_pull_request was never called, so there is no submitted configuration (calls: get_spoke)",
        ["create_spoke_pull_request"],
        [],
    ),
    # spoke_json_valid
    (
        "spoke_json_valid: 2 schema error(s) (submitted: create_spoke_pull_request call 2, turn 2, the only call with a "
        "configuration)\nschema errors:\n  /subnets/0/nsgRules/0/priority: 'high' is not of type 'integer' (schema)\n"
        "PR 2 validation failed\n  /location: location 'moon' is not an allowed region (allowed-location)",
        ["create_spoke_pull_request"],
        ["/subnets/0/nsgRules/0/priority", "/location"],
    ),
    # function_call_metrics
    (
        "function_call_metrics: reliability 0.83 < threshold 1.00; names P 0.67 R 0.67; arguments P 0.50 R 1.00\n"
        "  expected #1 get_spoke ↔ call 1 get_spoke: 1/1 expected arguments equal, 1 given\n"
        "  expected #2 create_spoke_pull_request ↔ call 3 create_spoke_pull_request: 1/2 expected arguments equal, "
        "2 given; differ: title, source_spoke\n  expected #3 validate_spoke_config: no matching call\n"
        "  call 2 get_spoke_schema: not expected",
        ["create_spoke_pull_request", "validate_spoke_config", "get_spoke_schema"],
        ["/title", "/source_spoke"],
    ),
    # pull_request
    (
        "pull_request: expected no pull request, but PR(s) created in the conversation: 7; create_spoke_pull_request "
        "succeeded at call 1, turn 2",
        ["create_spoke_pull_request"],
        [],
    ),
    (
        "pull_request: no URL of a PR of this portal (http://127.0.0.1:8400/repos/spokes/pullrequest/<id>) in the agent's "
        "replies (PRs created in the conversation: 2)",
        [],
        [],
    ),
    # others name nothing
    ("conversation: 7 tool calls > max_tool_calls 6 (2 turn(s), ended 'done', 7 tool call(s))", [], []),
    ("Expected output to contain all of virtual network, route table", [], []),
    ("", [], []),
]


@pytest.mark.parametrize(("reason", "tools", "paths"), CASES, ids=[c[0][:40] or "empty" for c in CASES])
def test_named_in(reason: str, tools: list[str], paths: list[str]) -> None:
    named = named_in(reason)
    assert (list(named.tools), list(named.paths)) == (tools, paths)
