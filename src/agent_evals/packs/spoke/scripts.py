"""The spoke pack's scripted agent for tests and benchmarks: :class:`SpokeCopy` reads a seed spoke,
copies it to a new name and address space so it validates, validates, asks, creates the pull
request and replies with its URL::

    copy = SpokeCopy("[C01]", source="crm-dev-neu", new_name="crm2-dev-neu", address_space="10.80.0.0/22")
    ScriptedConversations([copy.script()])          # user: request, "Yes, ...", "Thanks! [DONE]"
    vars = {"user_messages": copy.fixed_messages()}  # or a fixed user
    vars = {"simulated_user": {"goal": "[C01] a copy", "facts": copy.facts()}}  # a simulated one with its facts
"""

from __future__ import annotations

import copy
import ipaddress
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_evals.authoring import CONFIRM, THANKS, ChatRequest, ConversationScript, Reply, Step, tool_result


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

    def facts(self) -> dict[str, str]:
        """The simulated user's facts: every value its request states (else the user checks find it
        invented them)."""
        return {"network to copy": self.source, "new name": self.new_name, "address space": self.address_space}

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
