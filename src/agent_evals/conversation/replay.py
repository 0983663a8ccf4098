"""Record and replay the model side of a conversation.

Recording wraps the real chat models of agent and simulated user and keeps each
response in order. Replay serves the recorded responses instead, while the
tools run for real against the portal, and checks at every step that the run
still fits the cassette. The first step that doesn't is a
:class:`CassetteDivergence` naming it, e.g. the agent asked for the user model's
turn, a tool now fails where it succeeded, a fixed user message changed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agent_evals.conversation.cassette import (
    Cassette,
    CassetteError,
    ModelCall,
    RecordedResponse,
    RecordedToolCall,
)
from agent_evals.conversation.driver import ConversationRecord
from agent_evals.conversation.translate import Translation
from agent_evals.llm.types import ChatModel, ChatResponse, Message, ToolSpec

# Result fields whose recorded and live values must agree (they decide what the agent does next).
VERDICT_KEYS = ("valid", "status", "validation_status")


class CassetteDivergence(CassetteError):
    """The run no longer fits its cassette; the message names the first divergence."""


class RecordingChatModel:
    """A chat model that appends every response to a cassette."""

    def __init__(self, inner: ChatModel, role: str, cassette: Cassette) -> None:
        self._inner = inner
        self._role = role
        self._cassette = cassette

    @property
    def model(self) -> str:
        return self._inner.model

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
    ) -> ChatResponse:
        response = await self._inner.complete(messages, tools=tools, temperature=temperature)
        self._cassette.model_calls.append(
            ModelCall(role=self._role, response=RecordedResponse.from_response(response))  # type: ignore[arg-type]
        )
        return response

    async def aclose(self) -> None:
        closer = getattr(self._inner, "aclose", None)
        if closer is not None:
            await closer()


def finish_recording(cassette: Cassette, record: ConversationRecord) -> Cassette:
    """Copy the conversation's tool calls, user messages and outcome into the cassette."""
    from agent_evals.conversation.cassette import Outcome

    cassette.tool_calls = [
        RecordedToolCall(
            turn=turn,
            name=c.name,
            arguments=c.arguments,
            raw_arguments=c.raw_arguments,
            result=c.result,
            is_error=c.is_error,
        )
        for turn, c in record.tool_calls
    ]
    cassette.user_messages = [t.user for t in record.turns]
    if record.pending_user_message is not None:
        cassette.user_messages.append(record.pending_user_message)
    cassette.outcome = Outcome(
        conversation_end=record.end or "error",
        turns=record.user_messages_sent,
        pull_requests=list(record.pull_requests),
        error=record.error,
    )
    return cassette


class ReplaySession:
    """Serves a cassette's model responses in order and checks the run against it."""

    def __init__(self, cassette: Cassette, name: str) -> None:
        self.cassette = cassette
        self.name = name
        self.translation = Translation()
        self._next_call = 0
        self._tool_results_seen = 0

    def model(self, role: str, display_name: str | None = None) -> ReplayChatModel:
        recorded = display_name or self._recorded_model(role)
        return ReplayChatModel(self, role, recorded)

    def _recorded_model(self, role: str) -> str:
        if role == "agent":
            return str(self.cassette.agent.get("model") or "replay")
        return str(self.cassette.user.get("model") or "replay")

    def diverged(self, where: str) -> CassetteDivergence:
        return CassetteDivergence(f"cassette {self.name} no longer fits the run: {where}")

    def _recorded_error(self) -> str:
        outcome = self.cassette.outcome
        if outcome is not None and outcome.error:
            return f" (the recording itself ended in an error: {outcome.error[:200]})"
        return ""

    def check_user_kind(self, kind: str) -> None:
        """Before the run: the cassette was recorded with the same kind of user."""
        recorded = self.cassette.user.get("kind")
        if recorded and recorded != kind:
            raise self.diverged(f"it was recorded with a {recorded} user, this run uses {kind}")

    # -- model side ---------------------------------------------------------
    def next_response(self, role: str, messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> ChatResponse:
        if role == "agent":
            self._check_tool_results(messages)
        position = self._next_call
        if position >= len(self.cassette.model_calls):
            raise self.diverged(
                f"the run asked the {role} model for response {position + 1}, "
                f"but the cassette has only {len(self.cassette.model_calls)}" + self._recorded_error()
            )
        call = self.cassette.model_calls[position]
        if call.role != role:
            raise self.diverged(
                f"model response {position + 1}: the run asked the {role} model, "
                f"the cassette recorded a {call.role} response here"
            )
        self._next_call += 1
        response = call.response
        # A recorded call of a tool this agent is not offered is replayed as it was: if it
        # was refused when recorded too (a model naming a tool it may not use), that is what
        # the assertions must see; if it ran then, the is_error check names the divergence.
        for offset, request in enumerate(response.tool_calls):  # checked before the tools run
            self._recorded_tool(self._tool_results_seen + offset, request.name)
        return self._translated(response)

    def _translated(self, recorded: RecordedResponse) -> ChatResponse:
        response = recorded.to_response()
        t = self.translation
        if not (t.strings or t.numbers):
            return response
        from dataclasses import replace

        calls = tuple(replace(c, arguments=t.arguments(c.arguments)) for c in response.tool_calls)
        return replace(response, content=t.text(response.content), tool_calls=calls)

    def _check_tool_results(self, messages: Sequence[Message]) -> None:
        """Compare tool results the agent got since the last check with the recorded ones."""
        results = [m for m in messages if m.get("role") == "tool"]
        names = _tool_names_by_id(messages)
        for index in range(self._tool_results_seen, len(results)):
            message = results[index]
            name = names.get(str(message.get("tool_call_id")), "?")
            self._check_tool_result(index, name, str(message.get("content") or ""))
        self._tool_results_seen = len(results)

    def _check_tool_result(self, index: int, name: str, content: str) -> None:
        recorded = self._recorded_tool(index, name)
        live_error = content.startswith("Error")
        if recorded.is_error != live_error:
            was = "failed" if recorded.is_error else "succeeded"
            now = f"failed: {content[:200]}" if live_error else "succeeded"
            raise self.diverged(f"tool call {index + 1} ({name}, turn {recorded.turn}) {was} when recorded, now {now}")
        live = _parse(content)
        if isinstance(recorded.result, dict) and isinstance(live, dict):
            for key in VERDICT_KEYS:
                if key in recorded.result and recorded.result.get(key) != live.get(key):
                    raise self.diverged(
                        f"tool call {index + 1} ({name}, turn {recorded.turn}): {key} was "
                        f"{json.dumps(recorded.result.get(key))} when recorded, now {json.dumps(live.get(key))}"
                    )
        self.translation.learn(recorded.result, live)

    def _recorded_tool(self, index: int, name: str) -> RecordedToolCall:
        if index >= len(self.cassette.tool_calls):
            raise self.diverged(
                f"tool call {index + 1} ({name}): the cassette recorded only {len(self.cassette.tool_calls)} tool calls"
            )
        recorded = self.cassette.tool_calls[index]
        if recorded.name != name:
            raise self.diverged(f"tool call {index + 1}: the run calls {name}, the cassette recorded {recorded.name}")
        return recorded

    # -- conversation side --------------------------------------------------
    def check_user_message(self, number: int, text: str) -> None:
        """Before the agent sees user message ``number``: the cassette has the same one."""
        recorded_messages = self.cassette.user_messages
        if number > len(recorded_messages):
            raise self.diverged(
                f"turn {number}: the user sent a message the cassette doesn't have "
                f"(it recorded {len(recorded_messages)}): {text[:120]!r}"
            )
        if recorded_messages[number - 1] != text:
            raise self.diverged(
                f"turn {number}: the user said {text[:120]!r}, the cassette recorded "
                f"{recorded_messages[number - 1][:120]!r}"
            )

    def check_turn(self, record: ConversationRecord) -> None:
        """After each turn: its user message and its tool calls fit the cassette."""
        number, turn = len(record.turns), record.turns[-1]
        self.check_user_message(number, turn.user)
        calls_before = len(record.tool_calls) - len(turn.tool_calls)
        for offset, call in enumerate(turn.tool_calls):
            self._recorded_tool(calls_before + offset, call.name)

    def finish(self, record: ConversationRecord) -> None:
        """At the end of the run: nothing recorded was left unused."""
        if record.error is not None:
            return
        left = len(self.cassette.model_calls) - self._next_call
        if left > 0:
            following = self.cassette.model_calls[self._next_call]
            raise self.diverged(
                f"the run ended after {record.user_messages_sent} user message(s) ({record.end}), but the cassette "
                f"has {left} more model response(s), next from the {following.role} model"
            )
        made, recorded = len(record.tool_calls), len(self.cassette.tool_calls)
        if made < recorded:
            missing = self.cassette.tool_calls[made]
            raise self.diverged(
                f"the run made {made} tool call(s), the cassette recorded {recorded}; "
                f"the first missing is {missing.name} in turn {missing.turn}"
            )
        outcome = self.cassette.outcome
        if outcome is not None and outcome.conversation_end != record.end:
            raise self.diverged(
                f"the conversation ended {record.end}, the recording ended {outcome.conversation_end}"
            )


class ReplayChatModel:
    """A ``ChatModel`` answering from a :class:`ReplaySession`."""

    def __init__(self, session: ReplaySession, role: str, model: str) -> None:
        self._session = session
        self._role = role
        self._model = model

    @property
    def model(self) -> str:
        return self._model

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
    ) -> ChatResponse:
        return self._session.next_response(self._role, messages, tools)


def _tool_names_by_id(messages: Sequence[Message]) -> dict[str, str]:
    names: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            names[str(call.get("id"))] = str(call.get("function", {}).get("name"))
    return names


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
