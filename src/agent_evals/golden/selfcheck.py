"""The suites' self-check: can each suite catch what it claims to catch?

For every golden cassette, :func:`mutations` makes broken copies — a forbidden tool
called, the tool order changed, an argument changed, the pull request missing (or, in a
blocked case, created), a configuration change nobody asked for, the docs not read, a
key fact missing. Each copy is consistent (model responses and recorded tool calls change
together), so it replays for real against a portal, and each names the assertion metric
that must fail on it. :func:`grade_row` grades a replayed row the way Promptfoo does,
with the case's own assertions (the thin ``assertions/*.py`` files, plus the built-in
``icontains-all``; model-graded assertions are skipped).
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from agent_evals.conversation.cassette import (
    Cassette,
    ModelCall,
    RecordedResponse,
    RecordedToolCall,
    RecordedToolRequest,
)
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


def _agent_calls(cassette: Cassette) -> list[int]:
    """Indexes of the agent's model calls that carry tool calls."""
    return [i for i, c in enumerate(cassette.model_calls) if c.role == "agent" and c.response.tool_calls]


def _tool_index(cassette: Cassette, model_index: int) -> int:
    """Index in ``tool_calls`` of the first tool call made by model call ``model_index``."""
    return sum(len(c.response.tool_calls) for c in cassette.model_calls[:model_index] if c.role == "agent")


def _copy(cassette: Cassette) -> Cassette:
    return cassette.model_copy(deep=True)


def forbidden_tool(cassette: Cassette) -> Cassette:
    """The agent calls complete_pull_request just before its last reply."""
    out = _copy(cassette)
    last = max(i for i, c in enumerate(out.model_calls) if c.role == "agent")
    request = RecordedToolRequest(id="call_selfcheck", name=FORBIDDEN, arguments='{"id": 1}')
    out.model_calls.insert(last, ModelCall(role="agent", response=RecordedResponse(tool_calls=[request])))
    turn = out.tool_calls[-1].turn if out.tool_calls else len(out.user_messages)
    out.tool_calls.append(
        RecordedToolCall(turn=turn, name=FORBIDDEN, arguments={"id": 1}, raw_arguments='{"id": 1}',
                         result="not allowed", is_error=True)
    )
    return out


def swap_tools(cassette: Cassette, first: str, second: str) -> Cassette | None:
    """The model responses calling ``first`` and ``second`` trade places (with their tool records)."""
    calls = _agent_calls(cassette)
    a = next((i for i in calls if any(t.name == first for t in cassette.model_calls[i].response.tool_calls)), None)
    b = next((i for i in calls if any(t.name == second for t in cassette.model_calls[i].response.tool_calls)), None)
    if a is None or b is None or a == b:
        return None
    a, b = sorted((a, b))
    out = _copy(cassette)
    groups = {i: out.tool_calls[_tool_index(out, i): _tool_index(out, i) + len(out.model_calls[i].response.tool_calls)]
              for i in (a, b)}
    start_a, start_b = _tool_index(out, a), _tool_index(out, b)
    records = list(out.tool_calls)
    middle = records[start_a + len(groups[a]): start_b]
    records[start_a: start_b + len(groups[b])] = groups[b] + middle + groups[a]
    out.model_calls[a], out.model_calls[b] = out.model_calls[b], out.model_calls[a]
    out.tool_calls = records
    return out


def _edit_tool_arguments(cassette: Cassette, tool: str, edit: Callable[[dict[str, Any]], None]) -> Cassette | None:
    """Apply ``edit`` to the arguments of every call of ``tool`` (response and record)."""
    import json

    out = _copy(cassette)
    changed = False
    index = 0
    for call in out.model_calls:
        if call.role != "agent":
            continue
        for request in call.response.tool_calls:
            if request.name == tool:
                arguments = json.loads(request.arguments)
                edit(arguments)
                request.arguments = json.dumps(arguments)
                record = out.tool_calls[index]
                record.arguments, record.raw_arguments = arguments, request.arguments
                changed = True
            index += 1
    return out if changed else None


def change_argument(cassette: Cassette, expected_args: Mapping[str, Any]) -> Cassette | None:
    """A harmless argument the case expects gets another value (the PR is still valid)."""
    if "source_spoke" in expected_args:
        return _edit_tool_arguments(cassette, PR_TOOL, lambda a: a.__setitem__("source_spoke", "payments-prod-weu"))
    if "costCenter" in (expected_args.get("config") or {}).get("tags", {}):
        return _edit_tool_arguments(
            cassette, PR_TOOL, lambda a: a["config"]["tags"].__setitem__("costCenter", "CC-0000")
        )
    return None


def unexpected_config_change(cassette: Cassette, expected_changes: Mapping[str, Any]) -> Cassette | None:
    """The submitted configuration changes a tag nobody asked to change."""
    for tag, value in (("businessUnit", "Selfcheck"), ("owner", "selfcheck@contoso.com"), ("application", "selfcheck")):
        if f"/tags/{tag}" not in expected_changes:
            def edit(arguments: dict[str, Any], tag: str = tag, value: str = value) -> None:
                arguments["config"]["tags"][tag] = value  # still valid: only input_diff may notice

            return _edit_tool_arguments(cassette, PR_TOOL, edit)
    return None


def drop_pull_request(cassette: Cassette) -> Cassette | None:
    """No PR is created and the last reply carries no link."""
    out = _copy(cassette)
    position = next((i for i in _agent_calls(out) if out.model_calls[i].response.tool_calls[0].name == PR_TOOL), None)
    if position is None or len(out.model_calls[position].response.tool_calls) != 1:
        return None
    del out.tool_calls[_tool_index(out, position)]
    del out.model_calls[position]
    last = max(i for i, c in enumerate(out.model_calls) if c.role == "agent")
    out.model_calls[last].response.content = _URL.sub("", out.model_calls[last].response.content or "")
    return out


def create_pull_request(cassette: Cassette, case_id: str) -> Cassette:
    """A blocked case where the agent creates a PR anyway (a valid copy, so the portal accepts it)."""
    import json

    name = f"selfcheck-{case_id.lower()}"
    config = apply_changes(
        seed_spoke("crm-dev-neu"),
        {"/name": name, "/addressSpace/0": "10.99.0.0/22", "/subnets/0/addressPrefix": "10.99.0.0/24",
         "/subnets/1/addressPrefix": "10.99.1.0/26"},
    )
    arguments = {"spoke_name": name, "config": config, "title": "selfcheck", "description": "selfcheck"}
    out = forbidden_tool(cassette)  # same placement: just before the last reply
    request = out.model_calls[max(i for i, c in enumerate(out.model_calls) if c.role == "agent") - 1].response.tool_calls[0]
    request.name, request.arguments = PR_TOOL, json.dumps(arguments)
    record = out.tool_calls[-1]
    record.name, record.arguments, record.raw_arguments = PR_TOOL, arguments, request.arguments
    record.result, record.is_error = {}, False
    return out


def drop_tool(cassette: Cassette, tool: str) -> Cassette | None:
    """The model responses calling ``tool`` (alone) are gone, with their tool records."""
    out = _copy(cassette)
    positions = [i for i in _agent_calls(out) if [t.name for t in out.model_calls[i].response.tool_calls] == [tool]]
    if not positions:
        return None
    for position in reversed(positions):
        del out.tool_calls[_tool_index(out, position)]
        del out.model_calls[position]
    return out


def exceed_step_budget(cassette: Cassette, budget: int) -> Cassette:
    """The agent looks up the spoke list over and over, past the case's step budget."""
    out = _copy(cassette)
    extra = budget + 1 - len(out.tool_calls)
    for _ in range(max(extra, 1)):
        last = max(i for i, c in enumerate(out.model_calls) if c.role == "agent")
        request = RecordedToolRequest(id=f"call_budget_{last}", name="list_spokes", arguments="{}")
        out.model_calls.insert(last, ModelCall(role="agent", response=RecordedResponse(tool_calls=[request])))
        turn = out.tool_calls[-1].turn if out.tool_calls else len(out.user_messages)
        out.tool_calls.append(
            RecordedToolCall(turn=turn, name="list_spokes", arguments={}, raw_arguments="{}", result={}, is_error=False)
        )
    return out


def invalid_submission(cassette: Cassette) -> Cassette | None:
    """The PR is opened with a configuration the gate rejects (an unknown region)."""
    out = _edit_tool_arguments(cassette, PR_TOOL, lambda a: a["config"].__setitem__("location", "moon-central"))
    if out is None:
        return None
    for record in out.tool_calls:
        if record.name == PR_TOOL and isinstance(record.result, dict):
            record.result["validation_status"] = "failed"  # what the portal now answers
    return out


def drop_key_fact(cassette: Cassette, facts: list[str]) -> Cassette:
    """The final answer loses its first key fact."""
    out = _copy(cassette)
    last = max(i for i, c in enumerate(out.model_calls) if c.role == "agent")
    response = out.model_calls[last].response
    response.content = re.sub(re.escape(facts[0]), "…", response.content or "", flags=re.IGNORECASE)
    return out


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
    facts = next((a for a in case.asserts if a.get("type") == "icontains-all"), None)
    if facts is not None:
        yield Mutation("key fact missing", str(facts.get("metric") or "icontains-all"), drop_key_fact(cassette, list(facts["value"])))


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
        elif kind.removeprefix("not-") in MODEL_GRADED_TYPES:
            continue
        else:
            raise ValueError(f"the self-check cannot grade assertion type {kind!r}")
    return outcome
