"""Golden conversation plans: how a well-behaved agent and user hold each case's conversation.

A suite's ``golden/plan.yaml`` says, per case id, what the user says (``user``) and what
the agent does (``agent``: text replies and tool calls, in the order the agent's model
answers). Shapes shared by many cases live under ``shapes`` and are named by ``shape``.
Values may use placeholders, filled from the case and the run:

``$source``     the spoke the case copies (the case's ``input_diff`` source)
``$name``       the new spoke's name
``$submitted``  the configuration the case expects to be submitted: its ``input_diff``
                source with ``expected_changes`` applied, or the plan's ``submitted``
``$summary``    a short text summary of ``$submitted``
``$pr_url``     the URL the last ``create_spoke_pull_request`` call returned (live)
``{"$copy": spoke, "changes": {pointer: value}}``  a seed spoke with changes applied

The plans are played by a scripted model server while the cases run for real, in
record mode: the recordings are the golden cassettes (see ``agent_evals.golden.record``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agent_evals.assertions.expected_changes import ExpectedChange, expected_document
from agent_evals.testing.conversations import ConversationScript, tool_result
from agent_evals.testing.scripted_replies import ChatRequest, Reply

SEED_DIR = Path(__file__).resolve().parents[1] / "portal" / "seed" / "spokes"
PR_TOOL = "create_spoke_pull_request"


class PlanError(ValueError):
    """A golden plan doesn't fit its case; the message names the case and the problem."""


@dataclass(frozen=True)
class Case:
    """What the plan needs from a case file entry."""

    id: str
    first_message_key: str | None  # single-turn: the prompt; else None (taken from the plan)
    goal: str | None
    asserts: list[dict[str, Any]]


def seed_spoke(name: str) -> dict[str, Any]:
    path = SEED_DIR / f"{name}.json"
    if not path.is_file():
        raise PlanError(f"unknown seed spoke {name!r}")
    return json.loads(path.read_text(encoding="utf-8"))


def apply_changes(source: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    return expected_document(dict(source), [ExpectedChange(p, v) for p, v in changes.items()])


def _assert_config(case: Case, name: str) -> dict[str, Any] | None:
    for item in case.asserts:
        if str(item.get("value", "")).endswith(f"/{name}.py"):
            return dict(item.get("config") or {})
    return None


def submission(case: Case, entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """The configuration the case expects the agent to submit."""
    if "submitted" in entry:
        return dict(entry["submitted"])
    diff = _assert_config(case, "input_diff")
    if diff and isinstance(diff.get("source"), str):
        return apply_changes(seed_spoke(diff["source"]), diff.get("expected_changes") or {})
    return None


def summary(config: Mapping[str, Any]) -> str:
    subnets = ", ".join(f"{s['name']} {s['addressPrefix']}" for s in config.get("subnets", []))
    tags = config.get("tags", {})
    private_link = "enabled" if config.get("privateLink", {}).get("enabled") else "not enabled"
    return (
        f"Here is the configuration for **{config['name']}**:\n"
        f"- environment: {config['environment']}, region: {config['location']}\n"
        f"- address space: {', '.join(config['addressSpace'])}\n"
        f"- subnets: {subnets}\n"
        f"- private link: {private_link}\n"
        f"- cost centre {tags.get('costCenter')}, owner {tags.get('owner')}"
    )


class _Context:
    def __init__(self, case: Case, entry: Mapping[str, Any]) -> None:
        self.case = case
        self.submitted = submission(case, entry)
        diff = _assert_config(case, "input_diff") or {}
        self.source = diff.get("source")
        self.name = (self.submitted or {}).get("name")

    def value(self, value: Any, request: ChatRequest | None) -> Any:
        if isinstance(value, dict):
            if "$copy" in value:
                return apply_changes(seed_spoke(value["$copy"]), value.get("changes") or {})
            return {k: self.value(v, request) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, request) for v in value]
        if value == "$submitted":
            if self.submitted is None:
                raise PlanError(f"{self.case.id}: $submitted used, but the case has no input_diff and no 'submitted'")
            return self.submitted
        if isinstance(value, str):
            return self.text(value, request)
        return value

    def text(self, text: str, request: ChatRequest | None) -> str:
        if "$pr_url" in text:
            if request is None:
                raise PlanError(f"{self.case.id}: $pr_url is only known while the conversation runs")
            text = text.replace("$pr_url", str(tool_result(request, PR_TOOL)["url"]))
        if "$summary" in text:
            text = text.replace("$summary", summary(self.submitted or {}))
        for key, val in (("$source", self.source), ("$name", self.name)):
            if key in text and val is not None:
                text = text.replace(key, str(val))
        return text


def _agent_step(step: Mapping[str, Any], ctx: _Context, index: int) -> Reply | Callable[[ChatRequest], Reply]:
    if "say" in step:
        text = str(step["say"])
        if "$pr_url" in text:
            return lambda request: Reply.text(ctx.text(text, request))
        return Reply.text(ctx.text(text, None))
    calls = step.get("calls") or ([step["call"]] if "call" in step else None)
    if not calls:
        raise PlanError(f"{ctx.case.id}: agent step {index + 1} needs 'say', 'call' or 'calls'")
    requests: list[tuple[str, Any]] = []
    for position, call in enumerate(calls):
        if not isinstance(call, Mapping) or len(call) != 1:
            raise PlanError(f"{ctx.case.id}: agent step {index + 1}: a call is {{tool: arguments}}")
        (tool, arguments), = call.items()
        requests.append((tool, ctx.value(arguments or {}, None), f"call_{index + 1}_{position + 1}"))
    return Reply.tool_calls(requests)


def scripts_for(case: Case, entry: Mapping[str, Any], shapes: Mapping[str, Any]) -> list[ConversationScript]:
    """The scripted agent (and user) of one case."""
    shape = shapes.get(entry["shape"], {}) if entry.get("shape") else {}
    agent_steps = entry.get("agent", shape.get("agent"))
    user_lines = list(entry.get("user", []))
    if not agent_steps:
        raise PlanError(f"{case.id}: the plan has no agent steps")
    ctx = _Context(case, entry)
    key = case.first_message_key or (user_lines[0] if user_lines else None)
    if not key:
        raise PlanError(f"{case.id}: the plan needs the user's first message")
    agent = ConversationScript(key=key, agent=[_agent_step(s, ctx, i) for i, s in enumerate(agent_steps)])
    scripts = [agent]
    if case.first_message_key is None:
        if not case.goal:
            raise PlanError(f"{case.id}: a conversation case needs vars.simulated_user.goal")
        scripts.append(ConversationScript(key=case.goal.strip(), user=[ctx.text(u, None) for u in user_lines]))
    return scripts


def load_plan(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return dict(data.get("cases") or {}), dict(data.get("shapes") or {})
