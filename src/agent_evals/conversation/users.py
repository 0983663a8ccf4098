"""Who plays the user: fixed messages, an LLM-simulated developer, or your own simulator.

Your own simulator (rules instead of an LLM) subclasses :class:`BaseUserSimulator`
and is named in a case by its dotted path::

    from agent_evals.conversation.users import BaseUserSimulator, UserMessage

    class ConfirmsEverything(BaseUserSimulator):
        \"\"\"Asks for a copy, then confirms whatever the assistant proposes.\"\"\"

        def next_message(self, turns):
            if not turns:
                return UserMessage.say(self.params["request"])
            if len(turns) >= self.params.get("turns", 3):
                return UserMessage.stop("done")
            return UserMessage.say("Yes, that's right, please go ahead.")

    # test vars:  simulated_user: {class: mypackage.users:ConfirmsEverything, params: {request: "..."}}

``next_message`` gets the turns so far (the run record's
:class:`~agent_evals.record.Turn`: the user's message, the agent's reply and the tool
calls it made, each with its outcome) and returns the next message or a stop (``done``
or ``gave_up``). It may be ``async``. ``self.params`` holds the case's ``params``,
``self.llm`` the user model when one is configured (else ``None``); its tokens are
counted as the simulated user's. The kit ships one,
:class:`agent_evals.conversation.rule_users.ConfirmingUser`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agent_evals.conversation.framing import UserFraming
from agent_evals.conversation.metering import UserSimulatorError
from agent_evals.llm.types import ChatModel, ChatResponse, Message
from agent_evals.record import Turn

__all__ = [
    "BaseUserSimulator",
    "FixedMessages",
    "SimulatedUser",
    "TruncatedUserReply",
    "Turn",
    "UserFraming",
    "UserMessage",
    "UserStop",
]

UserStop = Literal["done", "gave_up"]


@dataclass(frozen=True)
class UserMessage:
    """The simulator's next move: a message to send (``text``), or the end (``end``)."""

    text: str | None = None
    end: UserStop | None = None

    @classmethod
    def say(cls, text: str) -> UserMessage:
        if not isinstance(text, str) or not text.strip():
            raise ValueError("a user message needs non-empty text")
        return cls(text=text)

    @classmethod
    def stop(cls, reason: UserStop = "done") -> UserMessage:
        if reason not in ("done", "gave_up"):
            raise ValueError(f"stop reason {reason!r} is not one of 'done', 'gave_up'")
        return cls(end=reason)


class BaseUserSimulator:
    """Base class of every user simulator (see the module docstring)."""

    def __init__(self, *, params: Mapping[str, Any] | None = None, llm: ChatModel | None = None) -> None:
        self.params: dict[str, Any] = dict(params or {})
        self.llm = llm

    def next_message(self, turns: Sequence[Turn]) -> UserMessage:  # pragma: no cover - abstract
        raise NotImplementedError

    async def next(self, turns: Sequence[Turn]) -> UserMessage:
        """Call ``next_message``, sync or async."""
        result = self.next_message(turns)
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, UserMessage):
            raise TypeError(
                f"{type(self).__name__}.next_message returned {type(result).__name__}, expected a UserMessage"
            )
        return result


class FixedMessages(BaseUserSimulator):
    """Sends the given messages in order, whatever the agent answers; done after the last."""

    def __init__(self, messages: Sequence[str]) -> None:
        super().__init__(params={"messages": list(messages)})
        if not messages or not all(isinstance(m, str) and m.strip() for m in messages):
            raise ValueError("user_messages must be a non-empty list of non-empty strings")
        self.messages = list(messages)

    def next_message(self, turns: Sequence[Turn]) -> UserMessage:
        if len(turns) >= len(self.messages):
            return UserMessage.stop("done")
        return UserMessage.say(self.messages[len(turns)])


DONE_MARKER = "[DONE]"
GIVE_UP_MARKER = "[GIVE UP]"

_SYSTEM_PROMPT = """\
{setting}

Your goal:
{goal}

How you talk:
{persona}

What you know (your facts):
{facts}

How to behave:
- You know your task well but you don't know {knows_inside}. \
Don't use technical field names unless they appear in your facts.
- Use only your facts. If the assistant asks for something that is not in your facts, say \
you don't know it; never invent names, numbers, addresses or other details.
- Share a fact when it is useful or when the assistant asks for it; you don't have to give \
everything at once.
- Never correct the assistant and never point out its mistakes.
- Don't change what the assistant proposes: if it suggests a value or asks you to confirm \
its proposal, accept it as it is.
- Stay on your task; keep your messages short and natural, like a chat message.
- When your task is done ({done_when}), end the conversation: reply \
with a short thank-you followed by {done} on its own line.
- If the conversation goes nowhere and you can't get your task done, reply with {give_up} \
on its own line.
{instructions}
Write only your next message as the user."""

_OPENING = "(The chat window is open. Write your first message to the assistant.)"


def _format_facts(facts: Any) -> str:
    if facts is None or facts == {} or facts == []:
        return "(none beyond your goal)"
    if isinstance(facts, Mapping):
        return "\n".join(f"- {k}: {v}" for k, v in facts.items())
    if isinstance(facts, (list, tuple)):
        return "\n".join(f"- {f}" for f in facts)
    return str(facts)


def simulated_user_prompt(
    goal: str, persona: str | None = None, facts: Any = None, instructions: str | None = None,
    framing: UserFraming = UserFraming(),
) -> str:
    """The system prompt of the LLM-simulated user."""
    return _SYSTEM_PROMPT.format(
        setting=framing.setting.strip(),
        knows_inside=framing.knows_inside,
        done_when=framing.done_when,
        goal=goal.strip(),
        persona=(persona or "Plain and polite.").strip(),
        facts=_format_facts(facts),
        instructions=f"- {instructions.strip()}\n" if instructions and instructions.strip() else "",
        done=DONE_MARKER,
        give_up=GIVE_UP_MARKER,
    )


class TruncatedUserReply(UserSimulatorError):
    """The simulated user's reply was cut off at its completion cap (kind ``user_simulator``):
    a half-written message would steer the conversation, so the run cannot go on."""


_PREVIEW_CHARS = 60


class SimulatedUser(BaseUserSimulator):
    """An LLM playing a developer with a goal, a persona and facts.

    ``max_tokens`` is the cap of each of its replies (None: the model's own cap). A reply
    cut off at the cap (``finish_reason: "length"``) raises :class:`TruncatedUserReply`.
    """

    def __init__(
        self,
        *,
        llm: ChatModel,
        goal: str,
        persona: str | None = None,
        facts: Any = None,
        instructions: str | None = None,
        temperature: float | None = 0.3,
        framing: UserFraming = UserFraming(),
        max_tokens: int | None = None,
    ) -> None:
        if not isinstance(goal, str) or not goal.strip():
            raise ValueError("simulated_user.goal is required: say what the user wants from the conversation")
        super().__init__(params={"goal": goal, "persona": persona, "facts": facts}, llm=llm)
        self.system_prompt = simulated_user_prompt(goal, persona, facts, instructions, framing)
        self.temperature = temperature
        self.max_tokens = max_tokens

    async def next_message(self, turns: Sequence[Turn]) -> UserMessage:  # type: ignore[override]  # the driver awaits an async one
        assert self.llm is not None
        options: dict[str, Any] = {} if self.max_tokens is None else {"max_tokens": self.max_tokens}
        response = await self.llm.complete(self._messages(turns), temperature=self.temperature, **options)
        if response.finish_reason == "length":
            raise self._truncated(response)
        return parse_user_reply(response.content or "")

    def _truncated(self, response: ChatResponse) -> TruncatedUserReply:
        tokens = self.max_tokens or response.usage.completion_tokens
        text = " ".join((response.content or "").split())
        preview = text if len(text) <= _PREVIEW_CHARS else text[: _PREVIEW_CHARS - 1] + "…"
        return TruncatedUserReply(
            f"the simulated user's reply was cut off at {tokens} tokens (its completion cap: "
            f"LLM_MAX_TOKENS_USER or the provider's user_max_tokens): {preview!r}"
        )

    def _messages(self, turns: Sequence[Turn]) -> list[Message]:
        # Roles are flipped: the simulated user is the "assistant" of its own model.
        messages: list[Message] = [{"role": "system", "content": self.system_prompt}]
        messages.append({"role": "user", "content": _OPENING})
        for turn in turns:
            messages.append({"role": "assistant", "content": turn.user})
            messages.append({"role": "user", "content": turn.assistant or "(no answer)"})
        return messages


_MARKERS = re.compile(r"\[(DONE|GIVE ?UP|GAVE ?UP)\]", re.IGNORECASE)


def parse_user_reply(text: str) -> UserMessage:
    """A simulated user's model reply as a message or a stop."""
    match = _MARKERS.search(text)
    if match:
        return UserMessage.stop("done" if match.group(1).upper() == "DONE" else "gave_up")
    if not text.strip():
        return UserMessage.stop("gave_up")
    return UserMessage.say(text.strip())
