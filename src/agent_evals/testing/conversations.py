"""Scripted conversations: one responder playing the agent's and the user's models for many
conversations at once, without state, so Promptfoo can run them concurrently.

A conversation is recognised by a *key* (for example ``"[C01]"``): the agent's requests
are matched on their first user message, the simulated user's on its system prompt (which
holds the goal). The step to play is the number of replies that model already gave in the
conversation: the count of ``assistant`` messages in the request. A step is a
:class:`Reply` (or a plain string for a text reply) or a function of the request, for
replies that depend on what the tools returned::

    script = ConversationScript(
        key="[C01]",
        agent=[
            Reply.tool_calls([("get_spoke", {"name": "payments-dev-weu"})]),
            "Shall I create the pull request?",
            Reply.tool_calls([("create_spoke_pull_request", {...})]),
            lambda request: Reply.text("Done: " + tool_result(request, "create_spoke_pull_request")["url"]),
        ],
        user=["[C01] Please copy payments-dev-weu", "Yes please", "Thanks! [DONE]"],
    )
    with ScriptedOpenAIServer(ScriptedConversations([script])) as server: ...

:class:`SpokeCopy` builds the usual realistic script: read a seed spoke, move it to a new
name and address space so it validates, validate, ask, create the pull request, reply
with its URL::

    copy = SpokeCopy("[C01]", source="crm-dev-neu", new_name="crm2-dev-neu", address_space="10.80.0.0/22")
    ScriptedConversations([copy.script()])          # user: request, "Yes, ...", "Thanks! [DONE]"
    vars = {"user_messages": copy.fixed_messages()}  # or a fixed user
"""

from __future__ import annotations

import copy
import ipaddress
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
    ) -> None:
        self.scripts = list(scripts)
        self.agent_model = agent_model
        self.user_model = user_model

    def __call__(self, request: ChatRequest) -> Reply:
        if is_preflight_ping(request):
            return Reply.text("OK", usage=(8, 1))
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


@dataclass(frozen=True)
class SpokeCopy:
    """A scripted agent that copies a seed spoke to a new name and address space."""

    key: str
    source: str = "crm-dev-neu"
    new_name: str = "crm2-dev-neu"
    address_space: str = "10.80.0.0/22"

    @property
    def request(self) -> str:
        """The user's first message (it carries the key)."""
        return (
            f"{self.key} Please copy {self.source} as {self.new_name} "
            f"with the address space {self.address_space}."
        )

    def fixed_messages(self) -> list[str]:
        return [self.request, CONFIRM]

    def script(self, user: Sequence[Step] | None = None) -> ConversationScript:
        """The agent's steps, and the simulated user's (default: ask, confirm, thank and stop)."""
        return ConversationScript(self.key, self.agent_steps(), user if user is not None else [
            self.request, CONFIRM, THANKS,
        ])

    def agent_steps(self) -> list[Step]:
        """get_spoke → validate_spoke_config → ask → (user confirms) → create PR → reply with its URL."""
        return [
            Reply.tool_calls([("get_spoke", {"name": self.source})]),
            lambda r: Reply.tool_calls([("validate_spoke_config", {"config": self.new_config(r)})]),
            lambda r: Reply.text(
                f"I prepared {self.new_name} as a copy of {self.source} with the address space "
                f"{self.address_space}; validation {_verdict(tool_result(r, 'validate_spoke_config'))}. "
                "Shall I create the pull request?"
            ),
            lambda r: Reply.tool_calls([("create_spoke_pull_request", {
                "spoke_name": self.new_name,
                "config": self.new_config(r),
                "title": f"Add spoke {self.new_name}",
                "description": f"Copy of {self.source} with the address space {self.address_space}.",
                "source_spoke": self.source,
            })]),
            lambda r: Reply.text(
                f"Done: here is your pull request {tool_result(r, 'create_spoke_pull_request')['url']}"
            ),
        ]

    def new_config(self, request: ChatRequest) -> dict[str, Any]:
        """The source spoke (from the request's get_spoke result), renamed and moved."""
        found = tool_result(request, "get_spoke")
        return relocate(found["config"], self.new_name, self.address_space)


def relocate(config: dict[str, Any], name: str, address_space: str) -> dict[str, Any]:
    """A copy of a spoke ``config`` named ``name``, with every address inside its first
    address space moved to the same offset inside ``address_space``."""
    old = ipaddress.ip_network(config["addressSpace"][0])
    new = ipaddress.ip_network(address_space)
    shift = int(new.network_address) - int(old.network_address)

    def move(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: move(v) for k, v in value.items()}
        if isinstance(value, list):
            return [move(v) for v in value]
        if isinstance(value, str):
            return _moved_address(value, old, shift)
        return value

    moved = move(copy.deepcopy(config))
    moved["name"] = name
    moved["addressSpace"] = [address_space]
    return moved


def _moved_address(text: str, old: ipaddress.IPv4Network | ipaddress.IPv6Network, shift: int) -> str:
    address, slash, length = text.partition("/")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return text
    if ip not in old:
        return text
    return str(ipaddress.ip_address(int(ip) + shift)) + slash + length


def _verdict(result: Any) -> str:
    if isinstance(result, dict) and result.get("valid"):
        return "passed"
    errors = result.get("errors") if isinstance(result, dict) else None
    return f"failed: {json.dumps(errors)}" if errors else "failed"


def is_preflight_ping(request: ChatRequest) -> bool:
    """The one cheap request ``agent-evals check`` sends each model before a live run."""
    from agent_evals.preflight.live_checks import PING

    return request.messages == PING and request.body.get("max_tokens") == 1
