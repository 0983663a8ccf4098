"""The suites' self-check: can each suite catch what it claims to catch?

For every golden cassette, :func:`mutations` makes broken copies — a forbidden tool
called, the tool order changed, an argument changed, the pull request missing (or, in a
blocked case, created), a configuration change nobody asked for, the docs not read, a
key fact missing. Each copy is consistent (model responses and recorded tool calls change
together), so it replays for real against a portal, and each names the assertion metric
that must fail on it. :func:`grade_row` grades a replayed row the way Promptfoo does,
with the case's own assertions (the thin ``assertions/*.py`` files, plus the built-in
``icontains-all``; model-graded and Promptfoo's trace-based ``trajectory:*`` assertions are
skipped).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from agent_evals.conversation.cassette import Cassette
from agent_evals.golden.plan import PR_TOOL, Case, apply_changes, seed_spoke
from agent_evals.judge import MODEL_GRADED_TYPES

FORBIDDEN = "complete_pull_request"
_URL = re.compile(r"\s*https?://\S+")


@dataclass(frozen=True)
class Mutation:
    name: str
    must_fail: str  # the metric of the assertion that must catch it
    cassette: Cassette


def _config(case: Case, stem: str) -> tuple[dict[str, Any], str] | None:
    for item in case.asserts:
        if str(item.get("value", "")).endswith(f"/{stem}.py"):
            return dict(item.get("config") or {}), str(item.get("metric") or stem)
    return None


class _Tape:
    """A mutable copy of a cassette's JSON form: model responses and recorded tool calls edited together."""

    def __init__(self, cassette: Cassette) -> None:
        self.data = copy.deepcopy(cassette.to_dict())

    @property
    def calls(self) -> list[dict[str, Any]]:
        return self.data["model_calls"]

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.data["record"]["tool_calls"]

    def requests(self, index: int) -> list[dict[str, Any]]:
        return self.calls[index]["response"]["tool_calls"]

    def agent_calls(self) -> list[int]:
        """Indexes of the agent's model calls that carry tool calls."""
        return [i for i, c in enumerate(self.calls) if c["role"] == "agent" and self.requests(i)]

    def last_agent_reply(self) -> int:
        return max(i for i, c in enumerate(self.calls) if c["role"] == "agent")

    def tool_index(self, model_index: int) -> int:
        """Index in the recorded tool calls of the first call made by model call ``model_index``."""
        return sum(len(self.requests(i)) for i in range(model_index) if self.calls[i]["role"] == "agent")

    def last_turn(self) -> int:
        return self.data["record"]["turns"]

    def insert_call(self, before: int, name: str, arguments: dict[str, Any], outcome: str, result: Any) -> None:
        """A model response calling ``name`` just before model call ``before``, and its tool record."""
        raw = json.dumps(arguments)
        call_id = f"call_selfcheck_{before}_{len(self.tools)}"
        response = {"content": None, "tool_calls": [{"id": call_id, "name": name, "arguments": raw}],
                    "usage": {}, "model": "selfcheck", "finish_reason": "tool_calls"}
        position = self.tool_index(before)
        self.calls.insert(before, {"role": "agent", "response": response})
        turn = self.tools[position - 1]["turn"] if position else self.last_turn()
        self.tools.insert(position, {"id": call_id, "name": name, "arguments": arguments, "raw_arguments": raw,
                                     "outcome": outcome, "is_error": outcome != "ok", "result": result,
                                     "turn": turn, "index": 0, "duration_ms": 0.0})

    def remove_model_call(self, index: int) -> None:
        start = self.tool_index(index)
        del self.tools[start: start + len(self.requests(index))]
        del self.calls[index]

    def done(self) -> Cassette:
        for number, call in enumerate(self.tools, start=1):
            call["index"] = number
        for entry in self.data["record"]["transcript"]:
            if entry["role"] == "assistant":
                entry["tool_calls"] = [c["name"] for c in self.tools if c["turn"] == entry["turn"]]
        return Cassette.from_dict(self.data, where="mutated cassette")


def forbidden_tool(cassette: Cassette) -> Cassette:
    """The agent calls complete_pull_request just before its last reply (the loop refuses it)."""
    tape = _Tape(cassette)
    note = f"{FORBIDDEN!r} is not one of your tools, so it was not called"
    tape.insert_call(tape.last_agent_reply(), FORBIDDEN, {"id": 1}, "refused", note)
    return tape.done()


def swap_tools(cassette: Cassette, first: str, second: str) -> Cassette | None:
    """The model responses calling ``first`` and ``second`` trade places (with their tool records)."""
    tape = _Tape(cassette)
    calls = tape.agent_calls()
    a = next((i for i in calls if any(t["name"] == first for t in tape.requests(i))), None)
    b = next((i for i in calls if any(t["name"] == second for t in tape.requests(i))), None)
    if a is None or b is None or a == b:
        return None
    a, b = sorted((a, b))
    start_a, start_b = tape.tool_index(a), tape.tool_index(b)
    group_a = tape.tools[start_a: start_a + len(tape.requests(a))]
    group_b = tape.tools[start_b: start_b + len(tape.requests(b))]
    middle = tape.tools[start_a + len(group_a): start_b]
    turn_a, turn_b = group_a[0]["turn"], group_b[0]["turn"]
    for call in group_a:
        call["turn"] = turn_b
    for call in group_b:
        call["turn"] = turn_a
    tape.tools[start_a: start_b + len(group_b)] = group_b + middle + group_a
    tape.calls[a], tape.calls[b] = tape.calls[b], tape.calls[a]
    return tape.done()


def _edit_tool_arguments(cassette: Cassette, tool: str, edit: Callable[[dict[str, Any]], None]) -> _Tape | None:
    """Apply ``edit`` to the arguments of every call of ``tool`` (response and record)."""
    tape = _Tape(cassette)
    changed = False
    index = 0
    for position, call in enumerate(tape.calls):
        if call["role"] != "agent":
            continue
        for request in tape.requests(position):
            if request["name"] == tool:
                arguments = json.loads(request["arguments"])
                edit(arguments)
                request["arguments"] = json.dumps(arguments)
                record = tape.tools[index]
                record["arguments"], record["raw_arguments"] = arguments, request["arguments"]
                changed = True
            index += 1
    return tape if changed else None


def change_argument(cassette: Cassette, expected_args: Mapping[str, Any]) -> Cassette | None:
    """A harmless argument the case expects gets another value (the PR is still valid)."""
    tape = None
    if "source_spoke" in expected_args:
        tape = _edit_tool_arguments(cassette, PR_TOOL, lambda a: a.__setitem__("source_spoke", "payments-prod-weu"))
    elif "costCenter" in (expected_args.get("config") or {}).get("tags", {}):
        tape = _edit_tool_arguments(
            cassette, PR_TOOL, lambda a: a["config"]["tags"].__setitem__("costCenter", "CC-0000")
        )
    return tape.done() if tape is not None else None


def unexpected_config_change(cassette: Cassette, expected_changes: Mapping[str, Any]) -> Cassette | None:
    """The submitted configuration changes a tag nobody asked to change."""
    for tag, value in (("businessUnit", "Selfcheck"), ("owner", "selfcheck@contoso.com"), ("application", "selfcheck")):
        if f"/tags/{tag}" not in expected_changes:
            def edit(arguments: dict[str, Any], tag: str = tag, value: str = value) -> None:
                arguments["config"]["tags"][tag] = value  # still valid: only input_diff may notice

            tape = _edit_tool_arguments(cassette, PR_TOOL, edit)
            return tape.done() if tape is not None else None
    return None


def drop_pull_request(cassette: Cassette) -> Cassette | None:
    """No PR is created and the last reply carries no link."""
    tape = _Tape(cassette)
    position = next((i for i in tape.agent_calls() if tape.requests(i)[0]["name"] == PR_TOOL), None)
    if position is None or len(tape.requests(position)) != 1:
        return None
    tape.remove_model_call(position)
    tape.data["record"]["pull_requests"] = []
    last = tape.calls[tape.last_agent_reply()]["response"]
    last["content"] = _URL.sub("", last["content"] or "")
    return tape.done()


def create_pull_request(cassette: Cassette, case_id: str) -> Cassette:
    """A blocked case where the agent creates a PR anyway (a valid copy, so the portal accepts it)."""
    name = f"selfcheck-{case_id.lower()}"
    config = apply_changes(
        seed_spoke("crm-dev-neu"),
        {"/name": name, "/addressSpace/0": "10.99.0.0/22", "/subnets/0/addressPrefix": "10.99.0.0/24",
         "/subnets/1/addressPrefix": "10.99.1.0/26"},
    )
    arguments = {"spoke_name": name, "config": config, "title": "selfcheck", "description": "selfcheck"}
    tape = _Tape(cassette)
    tape.insert_call(tape.last_agent_reply(), PR_TOOL, arguments, "ok", {})
    return tape.done()


def drop_tool(cassette: Cassette, tool: str) -> Cassette | None:
    """The model responses calling ``tool`` (alone) are gone, with their tool records."""
    tape = _Tape(cassette)
    positions = [i for i in tape.agent_calls() if [t["name"] for t in tape.requests(i)] == [tool]]
    if not positions:
        return None
    for position in reversed(positions):
        tape.remove_model_call(position)
    return tape.done()


def exceed_step_budget(cassette: Cassette, budget: int) -> Cassette:
    """The agent looks up the spoke list over and over, past the case's step budget."""
    tape = _Tape(cassette)
    for _ in range(max(budget + 1 - len(tape.tools), 1)):
        tape.insert_call(tape.last_agent_reply(), "list_spokes", {}, "ok", {})
    return tape.done()


def invalid_submission(cassette: Cassette) -> Cassette | None:
    """The PR is opened with a configuration the gate rejects (an unknown region)."""
    tape = _edit_tool_arguments(cassette, PR_TOOL, lambda a: a["config"].__setitem__("location", "moon-central"))
    if tape is None:
        return None
    for record in tape.tools:
        if record["name"] == PR_TOOL and isinstance(record["result"], dict):
            record["result"]["validation_status"] = "failed"  # what the portal now answers
    return tape.done()


def drop_key_fact(cassette: Cassette, facts: list[str]) -> Cassette:
    """The final answer loses its first key fact."""
    tape = _Tape(cassette)
    response = tape.calls[tape.last_agent_reply()]["response"]
    response["content"] = re.sub(re.escape(facts[0]), "…", response["content"] or "", flags=re.IGNORECASE)
    return tape.done()


def mutations(case: Case, cassette: Cassette) -> Iterator[Mutation]:
    """The broken copies of one case's golden cassette that its assertions must catch."""
    yield Mutation("forbidden tool called", "forbidden_tools", forbidden_tool(cassette))
    if (sequence := _config(case, "tool_sequence")) is not None:
        config, metric = sequence
        expected = list(config.get("expected") or [])
        if config.get("mode", "in_order") in ("in_order", "strict") and len(expected) >= 2:
            if (swapped := swap_tools(cassette, expected[0], expected[1])) is not None:
                yield Mutation("tool order changed", metric, swapped)
        elif config.get("mode") == "superset" and expected:
            if (dropped := drop_tool(cassette, expected[0])) is not None:
                yield Mutation(f"{expected[0]} not called", metric, dropped)
    if (argument := _config(case, "argument_match")) is not None:
        if (changed := change_argument(cassette, argument[0].get("args") or {})) is not None:
            yield Mutation("argument changed", argument[1], changed)
    if (pr := _config(case, "pull_request")) is not None:
        config, metric = pr
        if config.get("expect", "created") == "created":
            if (dropped := drop_pull_request(cassette)) is not None:
                yield Mutation("pull request missing", metric, dropped)
        else:
            yield Mutation("pull request created in a blocked case", metric, create_pull_request(cassette, case.id))
    if (valid := _config(case, "spoke_json_valid")) is not None:
        if (broken := invalid_submission(cassette)) is not None:
            yield Mutation("invalid configuration submitted", valid[1], broken)
    if (conversation := _config(case, "conversation")) is not None and "max_tool_calls" in conversation[0]:
        budget = int(conversation[0]["max_tool_calls"])
        yield Mutation("step budget exceeded", conversation[1], exceed_step_budget(cassette, budget))
    if (diff := _config(case, "input_diff")) is not None:
        if (changed := unexpected_config_change(cassette, diff[0].get("expected_changes") or {})) is not None:
            yield Mutation("unexpected configuration change", diff[1], changed)
    if (facts := _config(case, "reply_contains")) is not None and facts[0].get("all"):
        yield Mutation("key fact missing", facts[1], drop_key_fact(cassette, list(facts[0]["all"])))


@cache
def _assertion_module(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"selfcheck_{Path(path).stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def grade_row(suite_folder: Path, asserts: list[Mapping[str, Any]], response: Mapping[str, Any]) -> dict[str, bool]:
    """``{metric: passed}`` for every assertion that can be graded offline, as Promptfoo would."""
    outcome: dict[str, bool] = {}
    output = str(response.get("output") or "")
    for item in asserts:
        kind = str(item.get("type"))
        metric = str(item.get("metric") or kind)
        if kind == "python":
            path = (suite_folder / str(item["value"]).removeprefix("file://")).resolve()
            context = {"providerResponse": dict(response), "config": item.get("config") or {}, "vars": {}}
            result = _assertion_module(str(path)).get_assert(output, context)
            outcome[metric] = bool(result["pass"]) and outcome.get(metric, True)
        elif kind == "icontains-all":
            outcome[metric] = all(str(v).lower() in output.lower() for v in item["value"])
        elif kind.removeprefix("not-") in MODEL_GRADED_TYPES or kind.removeprefix("not-").startswith("trajectory:"):
            continue  # graded by a model, or by Promptfoo from the row's trace: not offline
        else:
            raise ValueError(f"the self-check cannot grade assertion type {kind!r}")
    return outcome
