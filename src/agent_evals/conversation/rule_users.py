"""Rule-based user simulators shipped with the kit (no user model needed).

:class:`ConfirmingUser` is the example of a custom simulator and the one to use for
smoke runs without a user model::

    tests:
      - description: C07 a request, confirming everything
        vars:
          simulated_user:
            class: agent_evals.conversation.rule_users:ConfirmingUser
            params:
              request: "Please open a ticket to give the billing team access to the reports folder."
              confirm: "Yes, that's right, please go ahead."   # optional
              max_messages: 4                                    # optional

It sends ``request`` first, then answers every reply with ``confirm`` until the
assistant's reply contains a pull-request link or a refusal (the conversation ends
``done``) or ``max_messages`` messages were sent without that (``gave_up``). It
never corrects the assistant and never changes what it proposes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from agent_evals.conversation.users import BaseUserSimulator, Turn, UserMessage
from agent_evals.llm.types import ChatModel

PULL_REQUEST_LINK = re.compile(r"https?://\S+/pullrequest/\d+")
REFUSAL = re.compile(
    r"\b(I can(?:not|'t|’t)|I am (?:not able|unable)|I'm (?:not able|unable)|I won(?:'t|’t)|"
    r"I (?:must|have to) decline|not (?:allowed|permitted) to)\b",
    re.IGNORECASE,
)
DEFAULT_CONFIRM = "Yes, that's right, please go ahead."
DEFAULT_MAX_MESSAGES = 5
_PARAMS = ("request", "confirm", "max_messages")


class ConfirmingUser(BaseUserSimulator):
    """Asks once (``request``), then confirms (``confirm``) until a PR link or a refusal.

    Params: ``request`` (required, the first message), ``confirm`` (default
    ``"Yes, that's right, please go ahead."``), ``max_messages`` (default 5, 1–100).
    """

    def __init__(self, *, params: Mapping[str, Any] | None = None, llm: ChatModel | None = None) -> None:
        super().__init__(params=params, llm=llm)
        unknown = sorted(set(self.params) - set(_PARAMS))
        if unknown:
            raise ValueError(f"ConfirmingUser: unknown param(s) {', '.join(unknown)}; allowed: {', '.join(_PARAMS)}")
        self.request = _text(self.params.get("request"), "request")
        self.confirm = _text(self.params.get("confirm", DEFAULT_CONFIRM), "confirm")
        self.max_messages = self.params.get("max_messages", DEFAULT_MAX_MESSAGES)
        if isinstance(self.max_messages, bool) or not isinstance(self.max_messages, int) or not (
            1 <= self.max_messages <= 100
        ):
            raise ValueError(f"ConfirmingUser: max_messages must be a whole number from 1 to 100, got {self.max_messages!r}")

    def next_message(self, turns: Sequence[Turn]) -> UserMessage:
        if not turns:
            return UserMessage.say(self.request)
        if is_finished(turns[-1].assistant):
            return UserMessage.stop("done")
        if len(turns) >= self.max_messages:
            return UserMessage.stop("gave_up")
        return UserMessage.say(self.confirm)


def is_finished(reply: str | None) -> bool:
    """The assistant gave a pull-request link or refused."""
    return bool(PULL_REQUEST_LINK.search(reply or "") or REFUSAL.search(reply or ""))


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"ConfirmingUser: param {name!r} must be a non-empty string, got {value!r}")
    return value
