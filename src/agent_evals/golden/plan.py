"""Golden conversation plans: how a well-behaved agent and user hold each case's conversation.

A suite's ``golden/plan.yaml`` says, per case id, what the user says (``user``) and what
the agent does (``agent``: text replies and tool calls, in the order the agent's model
answers). Shapes shared by many cases live under ``shapes`` and are named by ``shape``.

Values may use placeholders. The suite's domain pack fills its own (``$name``,
``{"$copy": …}``…: see :meth:`agent_evals.packs.base.Pack.plan_values`); the core has one:

``{"$find": "<regex>"}``  the first group of the regex in the latest message of the
                          conversation so far that matches (a number becomes an int), e.g.
                          the id of a pull request the user pasted: ``{"$find": "pullrequest/(\\d+)"}``
``$find(<regex>)``        the same inside text (a regex without parentheses: the whole match),
                          e.g. a simulated user's line quoting a link its facts hold

A placeholder that stands alone is replaced by its value (an object stays an object);
inside text, by its text. The plans are played by a scripted model server while the cases
run for real, in record mode: the recordings are the golden cassettes (see
``agent_evals.golden.record``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from agent_evals.packs.plans import Case, PlanValues
from agent_evals.testing.conversations import ConversationScript
from agent_evals.testing.scripted_replies import ChatRequest, Reply

if TYPE_CHECKING:
    from agent_evals.packs.base import Pack


class PlanError(ValueError):
    """A golden plan doesn't fit its case; the message names the case and the problem."""


@dataclass(frozen=True)
class Live:
    """A value known only while the conversation runs, from the model request being answered."""

    get: Callable[[ChatRequest], Any]


@dataclass(frozen=True)
class Unavailable:
    """A placeholder this case cannot fill; using it is a :class:`PlanError` with ``reason``."""

    reason: str


def find_in_conversation(pattern: str, request: ChatRequest) -> Any:
    """The first group of ``pattern`` in the latest message of ``request`` that matches."""
    regex = re.compile(pattern)
    for message in reversed(request.messages):
        content = message.get("content")
        match = regex.search(content if isinstance(content, str) else json.dumps(content or ""))
        if match:
            found = match.group(1) if regex.groups else match.group(0)
            return int(found) if found.isdigit() else found
    raise PlanError(f"$find {pattern!r}: nothing in the conversation so far matches")


_TEXT_FIND = re.compile(r"\$find\(([^()]*)\)")
_LIVE_PART = re.compile(r"\$find\(|\$fixture\.")


class _Context:
    def __init__(self, case: Case, domain: PlanValues) -> None:
        self.case = case
        self.domain = domain
        self.names = sorted(domain.values, key=len, reverse=True)  # longest first: $summary before $s…

    def is_live(self, value: Any) -> bool:
        """Whether ``value`` needs the model request (so its step is built while the conversation runs)."""
        if isinstance(value, dict):
            return "$find" in value or any(self.is_live(v) for v in value.values())
        if isinstance(value, list):
            return any(self.is_live(v) for v in value)
        if isinstance(value, str):
            return "$find(" in value or any(n in value and isinstance(self.domain.values[n], Live) for n in self.names)
        return False

    def resolve(self, name: str, request: ChatRequest | None) -> Any:
        value = self.domain.values[name]
        if isinstance(value, Unavailable):
            raise PlanError(f"{self.case.id}: {name} used, but {value.reason}")
        if isinstance(value, Live):
            if request is None:
                raise PlanError(f"{self.case.id}: {name} is only known while the conversation runs")
            return value.get(request)
        return value

    def value(self, value: Any, request: ChatRequest | None) -> Any:
        if isinstance(value, dict):
            if "$find" in value:
                if request is None:
                    raise PlanError(f"{self.case.id}: $find is only known while the conversation runs")
                return find_in_conversation(str(value["$find"]), request)
            if self.domain.expand is not None and (expanded := self.domain.expand(value)) is not None:
                return expanded
            return {k: self.value(v, request) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, request) for v in value]
        if isinstance(value, str):
            if value in self.domain.values:
                return self.resolve(value, request)
            return self.text(value, request)
        return value

    def text(self, text: str, request: ChatRequest | None) -> str:
        if "$find(" in text:
            if request is None:
                raise PlanError(f"{self.case.id}: $find is only known while the conversation runs")
            text = _TEXT_FIND.sub(lambda m: str(find_in_conversation(m.group(1), request)), text)
        for name in self.names:
            if name in text:
                value = self.resolve(name, request)
                text = text.replace(name, value if isinstance(value, str) else json.dumps(value))
        return text


def _agent_step(step: Mapping[str, Any], ctx: _Context, index: int) -> Reply | Callable[[ChatRequest], Reply]:
    if "say" in step:
        text = str(step["say"])
        if ctx.is_live(text):
            return lambda request: Reply.text(ctx.text(text, request))
        return Reply.text(ctx.text(text, None))
    calls = step.get("calls") or ([step["call"]] if "call" in step else None)
    if not calls:
        raise PlanError(f"{ctx.case.id}: agent step {index + 1} needs 'say', 'call' or 'calls'")
    parsed: list[tuple[str, Any, str]] = []
    for position, call in enumerate(calls):
        if not isinstance(call, Mapping) or len(call) != 1:
            raise PlanError(f"{ctx.case.id}: agent step {index + 1}: a call is {{tool: arguments}}")
        (tool, arguments), = call.items()
        parsed.append((tool, arguments or {}, f"call_{index + 1}_{position + 1}"))

    def build(request: ChatRequest | None) -> Reply:
        return Reply.tool_calls([(tool, ctx.value(arguments, request), call_id) for tool, arguments, call_id in parsed])

    if any(ctx.is_live(arguments) for _, arguments, _ in parsed):
        return build
    return build(None)


def _user_step(line: Any, ctx: _Context) -> str | Callable[[ChatRequest], Reply]:
    text = str(line)
    if ctx.is_live(text):
        return lambda request: Reply.text(ctx.text(text, request))
    return ctx.text(text, None)


def scripts_for(
    case: Case, entry: Mapping[str, Any], shapes: Mapping[str, Any], pack: Pack
) -> list[ConversationScript]:
    """The scripted agent (and user) of one case, with its pack's placeholders."""
    shape = shapes.get(entry["shape"], {}) if entry.get("shape") else {}
    if entry.get("shape") and not shape:
        raise PlanError(f"{case.id}: unknown shape {entry['shape']!r}; the plan's shapes: {', '.join(shapes) or 'none'}")
    agent_steps = entry.get("agent", shape.get("agent"))
    user_lines = list(entry.get("user", []))
    if not agent_steps:
        raise PlanError(f"{case.id}: the plan has no agent steps")
    ctx = _Context(case, pack.plan_values(case, entry))
    fixed = case.vars.get("user_messages")
    if isinstance(fixed, list) and fixed and not user_lines:  # fixed messages: no user to script
        first = str(fixed[0])
    else:
        first = case.first_message_key or (str(user_lines[0]) if user_lines else "")
    # the agent's requests are told apart by their first user message: its text before any value
    # only the run knows (a fixture's link), unless the plan gives the key
    key = str(entry.get("key") or _LIVE_PART.split(first, 1)[0]).strip()
    if not key:
        raise PlanError(f"{case.id}: the plan needs the user's first message")
    agent = ConversationScript(key=key, agent=[_agent_step(s, ctx, i) for i, s in enumerate(agent_steps)])
    scripts = [agent]
    if case.first_message_key is None and not (isinstance(fixed, list) and fixed):
        if not case.goal:
            raise PlanError(f"{case.id}: a conversation case needs vars.simulated_user.goal")
        goal_key = case.goal.split("$fixture", 1)[0].strip()  # the live goal has the fixture's values
        scripts.append(ConversationScript(key=goal_key, user=[_user_step(u, ctx) for u in user_lines]))
    return scripts


GENERATED_PLAN = "plan.generated.yaml"  # the entries of generated cases (agent_evals.cases), beside plan.yaml


def load_plan(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The plan's entries (with those of ``plan.generated.yaml`` next to it) and its shapes."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    entries = dict(data.get("cases") or {})
    generated = path.with_name(GENERATED_PLAN)
    if generated.is_file():
        more = dict((yaml.safe_load(generated.read_text(encoding="utf-8")) or {}).get("cases") or {})
        both = sorted(set(entries) & set(more))
        if both:
            raise PlanError(f"{path}: case(s) {', '.join(both)} are planned here and in {GENERATED_PLAN}")
        entries.update(more)
    return entries, dict(data.get("shapes") or {})
