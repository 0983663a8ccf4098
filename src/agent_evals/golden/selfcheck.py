"""The suites' self-check: can each suite catch what it claims to catch?

For every golden cassette, :func:`mutations` makes broken copies — a forbidden tool
called, the tool order changed, a required tool not called, the step budget exceeded, a key
fact missing, a value invented — and the suite's domain pack adds its own (see
:meth:`agent_evals.packs.base.Pack.mutations`). Each copy is consistent (model responses and recorded tool calls change
together), so it replays for real against a portal, and each names the assertion metric
that must fail on it. :func:`grade_row` grades a replayed row the way Promptfoo does,
with the case's own assertions (the thin ``assertions/*.py`` files, plus the built-in
``icontains-all``; model-graded, the kit's judged and Promptfoo's trace-based ``trajectory:*``
assertions are skipped). The user-side mutations (the simulated user stops early, invents a
fact, talks as the assistant, leaks its instructions, repeats itself) are
:mod:`agent_evals.golden.user_side`'s: the user checks must catch them.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from agent_evals.conversation.cassette import Cassette
from agent_evals.assertions.registry import JUDGED_CHECKS, check_name
from agent_evals.judge import MODEL_GRADED_TYPES
from agent_evals.packs import Pack
from agent_evals.packs.plans import Case, Mutation


class CassetteTape:
    """A mutable copy of a cassette's JSON form: model responses and recorded tool calls edited together.

    What a pack's :meth:`~agent_evals.packs.base.Pack.mutations` edits: ``calls`` (the model calls,
    each ``{"role", "response"}``), ``tools`` (the recorded tool calls, in order), ``insert_call``,
    ``remove_model_call``; :meth:`done` gives the mutated cassette back, consistent, to replay."""

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
        self.insert_calls(before, [(name, arguments, outcome, result)])

    def insert_calls(self, before: int, calls: list[tuple[str, dict[str, Any], str, Any]]) -> None:
        """One model response making ``calls`` (parallel tool calls: one tool round) just before model
        call ``before``, and their tool records."""
        position = self.tool_index(before)
        turn = self.tools[position - 1]["turn"] if position else self.last_turn()
        requests: list[dict[str, Any]] = []
        records: list[dict[str, Any]] = []
        for name, arguments, outcome, result in calls:
            raw = json.dumps(arguments)
            call_id = f"call_selfcheck_{before}_{len(self.tools) + len(records)}"
            requests.append({"id": call_id, "name": name, "arguments": raw})
            records.append({"id": call_id, "name": name, "arguments": arguments, "raw_arguments": raw,
                            "outcome": outcome, "is_error": outcome != "ok", "result": result,
                            "turn": turn, "index": 0, "duration_ms": 0.0})
        response: dict[str, Any] = {"content": None, "tool_calls": requests, "usage": {}, "model": "selfcheck",
                    "finish_reason": "tool_calls"}
        self.calls.insert(before, {"role": "agent", "response": response})
        self.tools[position:position] = records

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


def forbidden_tool(cassette: Cassette, tool: str) -> Cassette:
    """The agent calls ``tool`` just before its last reply (not one of its tools: the loop refuses it)."""
    tape = CassetteTape(cassette)
    note = f"{tool!r} is not one of your tools, so it was not called"
    tape.insert_call(tape.last_agent_reply(), tool, {"id": 1}, "refused", note)
    return tape.done()


def swap_tools(cassette: Cassette, first: str, second: str) -> Cassette | None:
    """The model responses calling ``first`` and ``second`` trade places (with their tool records)."""
    tape = CassetteTape(cassette)
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


def edit_tool_arguments(cassette: Cassette, tool: str, edit: Callable[[dict[str, Any]], None]) -> CassetteTape | None:
    """Apply ``edit`` to the arguments of every call of ``tool`` (response and record); None when the
    conversation never called it."""
    tape = CassetteTape(cassette)
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


def drop_tool(cassette: Cassette, tool: str) -> Cassette | None:
    """The model responses calling ``tool`` (alone) are gone, with their tool records."""
    tape = CassetteTape(cassette)
    positions = [i for i in tape.agent_calls() if [t["name"] for t in tape.requests(i)] == [tool]]
    if not positions:
        return None
    for position in reversed(positions):
        tape.remove_model_call(position)
    return tape.done()


def exceed_step_budget(cassette: Cassette, budget: int, call: tuple[str, dict[str, Any]]) -> Cassette:
    """The agent repeats a harmless call (the pack's) in one tool round, past the case's step budget."""
    tape = CassetteTape(cassette)
    name, arguments = call
    extra = max(budget + 1 - len(tape.tools), 1)
    tape.insert_calls(tape.last_agent_reply(), [(name, dict(arguments), "ok", {})] * extra)  # one tool round
    return tape.done()


def drop_key_fact(cassette: Cassette, facts: list[str], every_reply: bool = False) -> Cassette:
    """The final answer (or, with ``every_reply``, every answer) loses its first key fact."""
    tape = CassetteTape(cassette)
    replies = [i for i, c in enumerate(tape.calls) if c["role"] == "agent"] if every_reply else [tape.last_agent_reply()]
    for index in replies:
        response = tape.calls[index]["response"]
        response["content"] = re.sub(re.escape(facts[0]), "…", response["content"] or "", flags=re.IGNORECASE)
    return tape.done()


INVENTED = {  # a value of each kind no tool returns and no user says
    "cidr": "10.254.254.0/24", "ip": "10.254.254.254", "url": "https://invented.example/path/9999",
    "email": "invented.person@invented.example", "number": "987654321",
}


def invent_value(cassette: Cassette, value: str) -> Cassette:
    """The final answer states a value that nothing in the conversation gave the agent."""
    tape = CassetteTape(cassette)
    response = tape.calls[tape.last_agent_reply()]["response"]
    response["content"] = f"{response['content'] or ''}\n\nFor reference: {value}."
    return tape.done()


def _literal(names: list[str]) -> str | None:
    """The first name that is not a glob."""
    return next((n for n in names if not any(c in n for c in "*?[")), None)


def mutations(case: Case, cassette: Cassette, pack: Pack) -> Iterator[Mutation]:
    """The broken copies of one case's golden cassette that its assertions must catch: the core's,
    then the pack's."""
    if (forbidden := case.check("tool_not_executed")) is not None:
        offered = set((cassette.fingerprints.get("agent") or {}).get("tools") or {})
        # a tool the agent is not offered: the loop refuses the attempt, so the copy replays as recorded
        if (tool := _literal([t for t in forbidden[0].get("tools") or [] if t not in offered])) is not None:
            yield Mutation(f"forbidden tool {tool} attempted", forbidden[1], forbidden_tool(cassette, tool))
    if (sequence := case.check("tool_sequence")) is not None:
        config, metric = sequence
        expected = list(config.get("expected") or [])
        if config.get("mode", "in_order") in ("in_order", "strict") and len(expected) >= 2:
            if (swapped := swap_tools(cassette, expected[0], expected[1])) is not None:
                yield Mutation("tool order changed", metric, swapped)
        elif config.get("mode") == "superset" and expected:
            if (dropped := drop_tool(cassette, expected[0])) is not None:
                yield Mutation(f"{expected[0]} not called", metric, dropped)
    conversation = case.check("conversation")
    if conversation is not None and "max_tool_calls" in conversation[0] and pack.harmless_call is not None:
        budget = int(conversation[0]["max_tool_calls"])
        yield Mutation(
            "step budget exceeded", conversation[1], exceed_step_budget(cassette, budget, pack.harmless_call)
        )
    if (facts := case.check("reply_contains")) is not None and facts[0].get("all"):
        every = facts[0].get("reply") == "any"
        yield Mutation("key fact missing", facts[1], drop_key_fact(cassette, list(facts[0]["all"]), every))
    if (grounded := case.check("reply_grounded")) is not None:
        kinds = [k for k in grounded[0].get("kinds") or ("cidr", "ip", "url", "email") if k in INVENTED]
        if kinds:
            yield Mutation(f"{kinds[0]} invented", grounded[1], invent_value(cassette, INVENTED[kinds[0]]))
    yield from pack.mutations(case, cassette)


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
        if check_name(item) in JUDGED_CHECKS:
            continue  # the kit's judged checks need the judge model: not graded offline
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
