"""Scripted conversations: one responder playing the agent's and the user's models for many
conversations at once, without state, so Promptfoo can run them concurrently.

A conversation is recognised by a *key* (for example ``"[C01]"``): the agent's requests
are matched on their first user message, the simulated user's on its system prompt (which
holds the goal). The step to play is the number of replies that model already gave in the
conversation: the count of ``assistant`` messages in the request. Questions of the kit's
judge go to ``judge`` (a function of the request), or fail when none is given. A step is a
:class:`Reply` (or a plain string for a text reply) or a function of the request, for
replies that depend on what the tools returned::

    script = ConversationScript(
        key="[C01]",
        agent=[
            Reply.tool_calls([("get_item", {"name": "billing"})]),
            "Shall I open the ticket?",
            Reply.tool_calls([("open_ticket", {...})]),
            lambda request: Reply.text("Done: " + tool_result(request, "open_ticket")["url"]),
        ],
        user=["[C01] Please open a ticket for billing", "Yes please", "Thanks! [DONE]"],
    )
    with ScriptedOpenAIServer(ScriptedConversations([script])) as server: ...

A domain pack may ship scripts of its own (a ``scripts`` module in its package) for the
realistic conversations of its domain.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_evals.testing.scripted_replies import ChatRequest, Reply

Step = Reply | str | Callable[[ChatRequest], Reply]

AGENT_MODEL = "agent-model"
USER_MODEL = "user-model"


@dataclass(frozen=True)
class ConversationScript:
    key: str
    agent: Sequence[Step] = ()
    user: Sequence[Step] = field(default_factory=tuple)


def tool_result(request: ChatRequest, name: str) -> Any:
    """The latest result of tool ``name`` in the request (parsed JSON when possible)."""
    names: dict[str, str] = {}
    for message in request.messages:
        for call in message.get("tool_calls") or ():
            names[call["id"]] = call["function"]["name"]
    for message in reversed(request.messages):
        if message.get("role") == "tool" and names.get(str(message.get("tool_call_id"))) == name:
            try:
                return json.loads(message["content"])
            except (ValueError, TypeError):
                return message["content"]
    raise LookupError(f"no result of {name} in the request")


class ScriptedConversations:
    """A responder for :class:`~agent_evals.testing.scripted_openai.ScriptedOpenAIServer`."""

    def __init__(
        self,
        scripts: Iterable[ConversationScript],
        *,
        agent_model: str = AGENT_MODEL,
        user_model: str = USER_MODEL,
        judge: Callable[[ChatRequest], Reply] | None = None,
    ) -> None:
        self.scripts = list(scripts)
        self.agent_model = agent_model
        self.user_model = user_model
        self.judge = judge

    def __call__(self, request: ChatRequest) -> Reply:
        if is_preflight_ping(request):
            return Reply.text("OK", usage=(8, 1))
        if is_judge_request(request):
            if self.judge is None:
                return _fail("a judge question, but no judge is scripted (pass judge= to ScriptedConversations, "
                             "or set JUDGE_MODEL=none)")
            return self.judge(request)
        role = self._role(request)
        haystack = _system_prompt(request) if role == "user" else _first_user_message(request)
        script = next((s for s in self.scripts if s.key in haystack), None)
        if script is None:
            return _fail(f"no script matches this {role} request (looked for keys in {haystack[:80]!r})")
        steps = script.user if role == "user" else script.agent
        index = sum(1 for m in request.messages if m.get("role") == "assistant")
        if index >= len(steps):
            return _fail(f"script {script.key}: the {role} model has no step {index + 1} (has {len(steps)})")
        step = steps[index]
        if isinstance(step, str):
            return Reply.text(step)
        if isinstance(step, Reply):
            return step
        return step(request)


    def _role(self, request: ChatRequest) -> str:
        if request.model != self.user_model:
            return "agent"
        if self.user_model != self.agent_model:
            return "user"
        return "agent" if request.tools else "user"  # one model plays both: only the agent is offered tools


def _first_user_message(request: ChatRequest) -> str:
    for message in request.messages:
        if message.get("role") == "user":
            return str(message.get("content") or "")
    return ""


def _system_prompt(request: ChatRequest) -> str:
    for message in request.messages:
        if message.get("role") == "system":
            return str(message.get("content") or "")
    return ""


def _fail(message: str) -> Reply:
    return Reply.error(500, body=message, headers={"x-should-retry": "false"})


CONFIRM = "Yes, that's right, please create it."
THANKS = "Thanks, that's all I needed. [DONE]"


def is_judge_request(request: ChatRequest) -> bool:
    """A question of the kit's judge (agent_evals.judging) about a conversation."""
    from agent_evals.judging.questions import SYSTEM_OPENING  # lazy: loads pydantic only when used (start-up time)

    return _system_prompt(request).startswith(SYSTEM_OPENING)


def is_preflight_ping(request: ChatRequest) -> bool:
    """The one cheap request ``agent-evals check`` sends each model before a live run."""
    from agent_evals.preflight.live_checks import PING  # lazy: loads pydantic only when used (start-up time)

    return request.messages == PING and request.body.get("max_tokens") == 1
