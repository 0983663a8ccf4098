"""Replay: serve a cassette's model responses while the tools run for real, and check fit.

A :class:`ReplaySession` answers the agent's, the user's and the judge's model calls from
the cassette in order, and checks at every step that the run still fits the recording:

* before the run, and at the agent's first model call, the fingerprints (what the
  conversation depended on: the case, the user's definition, the agent's instructions,
  temperature and tools); a difference is a :class:`StaleCassette` naming it, unless
  stale recordings are allowed (then the row's ``replay.stale`` lists the changes);
* each model call of the agent and the user: the right role at the right position (judge
  replies are served by the question they answered, see :meth:`ReplaySession.judge_reply`);
* each tool call a served response asks for: the same tool with the same arguments as the
  recording (its generated values translated);
* each executed tool call (through :meth:`ReplaySession.wrap_tools`): the same tool, the same
  arguments, and the same typed outcome (``ok`` / ``tool_error``) as recorded, and the same verdict fields
  (``valid``, ``status``, ``validation_status``); values the portal generated (PR ids, URLs)
  are learned and translated in later responses (:mod:`.translate`);
* each user message and, after each turn, every call's name and outcome;
* at the end: nothing recorded was left unused, and the conversation ended as recorded.

The first step that doesn't fit is a :class:`CassetteDivergence` naming it: the turn, the
call, and for a tool call's arguments or result the JSON path and both values (the model
response asks for ``/name = "a"``, the cassette recorded ``"b"``; a call ran with other
arguments than recorded; a verdict field such as ``/valid`` differs).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from agent_evals.agent.loop import ToolExecutor
from agent_evals.agent.types import ToolResult
from agent_evals.conversation.cassette import Cassette, CassetteError
from agent_evals.conversation.fingerprints import agent_fingerprint, differences
from agent_evals.conversation.translate import Translation
from agent_evals.llm.types import ChatModel, ChatResponse, Message, Role, ToolSpec
from agent_evals.record import KitError, RunRecord, ToolCall
from agent_evals.record.json_diff import first_difference, shown

# Result fields whose recorded and live values must agree (they decide what the agent does next).
VERDICT_KEYS = ("valid", "status", "validation_status")


class CassetteDivergence(CassetteError):
    """The run no longer fits its cassette; the message names the first divergence."""


class StaleCassette(CassetteError):
    """What the recording depended on has changed; the message lists what."""


class ReplaySession:
    """Serves a cassette's model responses in order and checks the run against it."""

    def __init__(self, cassette: Cassette, name: str, *, allow_stale: bool = False) -> None:
        self.cassette = cassette
        self.name = name
        self.allow_stale = allow_stale
        self.stale: list[str] = []
        self.translation = Translation()
        self._next_call = 0
        self._executed = 0  # tool calls that ran (ok or tool_error), seen through wrap_tools
        self._served_requests = 0  # tool calls in the responses served so far
        self._tools_wrapped = False
        self._agent_checked = False
        self._recorded = cassette.record.tool_calls
        self._judge_used: set[int] = set()

    @property
    def recorded_model(self) -> Mapping[Role, str]:
        record = self.cassette.record
        return {"agent": record.agent.model or "replay", "user": record.user.model or "replay", "judge": "replay"}

    def model(self, role: Role) -> ReplayChatModel:
        return ReplayChatModel(self, role, self.recorded_model[role])

    def diverged(self, where: str) -> CassetteDivergence:
        return CassetteDivergence(f"cassette {self.name} no longer fits the run: {where}")

    # -- fingerprints -------------------------------------------------------------------
    def check_fingerprint(self, part: str, current: Mapping[str, Any]) -> None:
        """Compare one part of the fingerprints; stale unless allowed."""
        recorded = self.cassette.fingerprints.get(part)
        changed = differences(part, recorded, current)
        if not changed:
            return
        if not self.allow_stale:
            raise StaleCassette(
                f"cassette {self.name} is stale: {'; '.join(changed)}. Re-record it "
                "(`python -m agent_evals.golden <suite> --stale` for golden conversations), or replay it "
                "anyway with --allow-stale"
            )
        self.stale.extend(changed)

    def replay_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"cassette": self.name}
        if not self.cassette.fingerprints:
            info["fingerprints"] = "none (upgraded from an older format): staleness not checked"
        if self.stale:
            info["stale"] = list(self.stale)
        return info

    # -- model side ---------------------------------------------------------------------
    def next_response(
        self, role: Role, messages: Sequence[Message], tools: Sequence[ToolSpec] | None, temperature: float | None
    ) -> ChatResponse:
        if role == "agent":
            if not self._agent_checked:
                self._agent_checked = True
                self.check_fingerprint("agent", agent_fingerprint(messages, tools, temperature))
            if not self._tools_wrapped:
                self._learn_from_messages(messages)
        calls = self.cassette.model_calls
        while self._next_call < len(calls) and calls[self._next_call].role == "judge":
            self._next_call += 1  # judge replies are served by their question, not in order
        position = self._next_call
        if position >= len(calls):
            raise self.diverged(
                f"the run asked the {role} model for response {position + 1}, "
                f"but the cassette has only {len(calls)}" + self._recorded_error()
            )
        call = calls[position]
        if call.role != role:
            raise self.diverged(
                f"model response {position + 1}: the run asked the {role} model, "
                f"the cassette recorded a {call.role} response here"
            )
        self._next_call += 1
        served = self._translated(call.response)
        for request in served.tool_calls:  # checked before the tools run
            self._check_request(request)
        return served

    @property
    def has_judge_replies(self) -> bool:
        """Whether the recording holds judge replies (a recording made without a judge has none)."""
        return any(c.role == "judge" for c in self.cassette.model_calls)

    def has_judge_reply(self, question: str) -> bool:
        """Whether the recording holds a reply to ``question`` (questions about the user are asked only
        where the rules could not decide, so an older recording may have none)."""
        return any(c.role == "judge" and c.question == question for c in self.cassette.model_calls)

    def judge_reply(self, question: str | None) -> ChatResponse:
        """The next unused recorded judge reply to ``question`` (a retry recorded two)."""
        for position, call in enumerate(self.cassette.model_calls):
            if call.role == "judge" and call.question == question and position not in self._judge_used:
                self._judge_used.add(position)
                return call.response
        asked = sum(1 for p in self._judge_used if self.cassette.model_calls[p].question == question)
        raise self.diverged(
            f"the judge was asked question {question}{' again' if asked else ''}, which the recording has no reply to: "
            "a judged check's config (a statement, the goal, the expected route) changed since it was recorded; "
            "re-record the case"
        )

    def _check_request(self, request: ToolCall) -> None:
        """A tool call the model response asks for: the same tool, with the same arguments, as recorded."""
        position = self._served_requests
        self._served_requests += 1
        name = request.name
        if position >= len(self._recorded):
            raise self.diverged(
                f"tool call {position + 1} ({name}): the cassette recorded only {len(self._recorded)} tool calls"
            )
        recorded = self._recorded[position]
        if recorded.name != name:
            raise self.diverged(
                f"turn {recorded.turn}, tool call {position + 1}: the run calls {name}, the cassette recorded "
                f"{recorded.name}"
            )
        self._check_arguments(recorded, request.raw_arguments, "asks for")

    def _check_arguments(self, recorded: ToolCall, raw: str | Mapping[str, Any], what: str) -> None:
        """The first argument that differs from the recording (its recorded generated values translated)."""
        expected = _parse(self.translation.arguments(recorded.raw_arguments))
        live = _parse(raw) if isinstance(raw, str) else dict(raw)
        found = first_difference(expected, live)
        if found is not None:
            path, was, now = found
            raise self.diverged(
                f"turn {recorded.turn}, tool call {recorded.index} ({recorded.name}): the run {what} argument {path} "
                f"= {shown(now)}, the cassette recorded {shown(was)}"
            )

    def _recorded_error(self) -> str:
        end = self.cassette.record.end
        if end is not None and end.reason == "error":
            return f" (the recording itself ended in an error: {(end.error or '')[:200]})"
        return ""

    def _translated(self, recorded: ChatResponse) -> ChatResponse:
        t = self.translation
        if not (t.strings or t.numbers):
            return recorded
        calls = tuple(
            ToolCall.request(c.id, c.name, t.arguments(c.raw_arguments)) for c in recorded.tool_calls
        )
        return replace(recorded, content=t.text(recorded.content), tool_calls=calls)

    def _learn_from_messages(self, messages: Sequence[Message]) -> None:
        """For agents whose factory ignores ``wrap_tools``: learn generated values from tool messages."""
        results = [m for m in messages if m.get("role") == "tool"]
        ran = [c for c in self._recorded if c.ran]
        for recorded, message in zip(ran, results, strict=False):
            self.translation.learn(recorded.result, _parse(str(message.get("content") or "")))

    # -- tool side ----------------------------------------------------------------------
    def wrap_tools(self, tools: ToolExecutor) -> ToolExecutor:
        """The agent's tool executor, checking every executed call against the recording."""
        self._tools_wrapped = True
        return _ReplayTools(tools, self)

    def check_executed(self, name: str, result: ToolResult, arguments: Mapping[str, Any] | None = None) -> None:
        """An executed call (ok or tool error) against the next recorded executed call: its tool, the
        arguments it ran with, its outcome and verdict fields."""
        ran = [c for c in self._recorded if c.ran]
        position = self._executed
        self._executed += 1
        if position >= len(ran):
            raise self.diverged(f"the run executes {name}, but the cassette recorded only {len(ran)} executed tool call(s)")
        recorded = ran[position]
        where = f"turn {recorded.turn}, tool call {recorded.index} ({name})"
        if recorded.name != name:
            raise self.diverged(
                f"turn {recorded.turn}, tool call {recorded.index}: the run calls {name}, the cassette recorded "
                f"{recorded.name}"
            )
        if arguments is not None:
            self._check_arguments(recorded, arguments, "runs the tool with")
        live_error = result.is_error
        if (recorded.outcome == "tool_error") != live_error:
            was = "failed" if recorded.outcome == "tool_error" else "succeeded"
            now = f"failed: {result.text[:200]}" if live_error else "succeeded"
            raise self.diverged(f"{where} {was} when recorded, now {now}")
        if isinstance(recorded.result, dict) and isinstance(result.value, dict):
            for key in VERDICT_KEYS:
                if key in recorded.result and recorded.result.get(key) != result.value.get(key):
                    detail = first_difference(recorded.result, result.value)
                    after = (f" (the results first differ at {detail[0]}: recorded {shown(detail[1])}, now "
                             f"{shown(detail[2])})" if detail is not None and detail[0] != f"/{key}" else "")
                    raise self.diverged(
                        f"{where}: result /{key} = {json.dumps(result.value.get(key))}, the cassette recorded "
                        f"{json.dumps(recorded.result.get(key))}{after}"
                    )
        self.translation.learn(recorded.result, result.value)

    def learn_fixtures(self, live: Sequence[Mapping[str, Any]]) -> None:
        """The case's fixtures were made again: their new ids and URLs stand for the recorded ones."""
        recorded = self.cassette.record.fixtures
        if len(recorded) != len(live):
            raise self.diverged(f"the case made {len(live)} fixture(s), the cassette recorded {len(recorded)}")
        self.translation.learn(list(recorded), list(live))

    # -- conversation side --------------------------------------------------------------
    def check_user_message(self, number: int, text: str) -> None:
        """Before the agent sees user message ``number``: the cassette has the same one."""
        recorded = self._user_messages()
        if number > len(recorded):
            raise self.diverged(
                f"turn {number}: the user sent a message the cassette doesn't have "
                f"(it recorded {len(recorded)}): {text[:120]!r}"
            )
        if self.translation.text(recorded[number - 1]) != text:  # a fixture's new URL, say
            raise self.diverged(f"turn {number}: the user said {text[:120]!r}, the cassette recorded {recorded[number - 1][:120]!r}")

    def _user_messages(self) -> list[str]:
        record = self.cassette.record
        return [t.user for t in record.turns] + ([record.pending.user] if record.pending else [])

    def check_turn(self, record: RunRecord) -> None:
        """After each turn: its message, and each call's name and outcome, fit the cassette."""
        number, turn = len(record.turns), record.turns[-1]
        self.check_user_message(number, turn.user)
        for call in turn.tool_calls:
            self._check_call(call)

    def _check_call(self, call: ToolCall) -> None:
        if call.index > len(self._recorded):
            raise self.diverged(
                f"tool call {call.index} ({call.name}): the cassette recorded only {len(self._recorded)} tool calls"
            )
        recorded = self._recorded[call.index - 1]
        if recorded.name != call.name:
            raise self.diverged(f"tool call {call.index}: the run calls {call.name}, the cassette recorded {recorded.name}")
        if recorded.outcome != call.outcome:
            raise self.diverged(
                f"tool call {call.index} ({call.name}, turn {call.turn}): outcome {call.outcome}, "
                f"the cassette recorded {recorded.outcome}"
            )

    def finish(self, record: RunRecord) -> None:
        """At the end of the run: nothing recorded was left unused, and it ended the same way."""
        if record.end is not None and record.end.reason == "error":
            return
        rest = [c for c in self.cassette.model_calls[self._next_call:] if c.role != "judge"]
        left = len(rest)
        if left > 0:
            following = rest[0]
            raise self.diverged(
                f"the run ended after {record.user_messages_sent} user message(s) ({record.end.reason if record.end else '?'}), "
                f"but the cassette has {left} more model response(s), next from the {following.role} model"
            )
        made, recorded = len(record.tool_calls), len(self._recorded)
        if made < recorded:
            missing = self._recorded[made]
            raise self.diverged(
                f"the run made {made} tool call(s), the cassette recorded {recorded}; "
                f"the first missing is {missing.name} in turn {missing.turn}"
            )
        recorded_end = self.cassette.record.end
        if recorded_end is not None and record.end is not None and recorded_end.reason != record.end.reason:
            raise self.diverged(f"the conversation ended {record.end.reason}, the recording ended {recorded_end.reason}")


class _ReplayTools:
    """A tool executor that checks each result against the cassette (see ReplaySession.check_executed)."""

    def __init__(self, inner: ToolExecutor, session: ReplaySession) -> None:
        self._inner = inner
        self._session = session

    @property
    def specs(self) -> list[ToolSpec]:
        return self._inner.specs

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        try:
            result = await self._inner.call(name, arguments)
        except KitError:
            raise
        except Exception as exc:  # the loop reports it to the model as a tool error; so does the check
            self._session.check_executed(name, ToolResult(None, f"the tool failed: {exc}", True), arguments)
            raise
        self._session.check_executed(name, result, arguments)
        return result


class ReplayChatModel:
    """A ``ChatModel`` answering from a :class:`ReplaySession`."""

    def __init__(self, session: ReplaySession, role: Role, model: str) -> None:
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
        question: str | None = None,
        **_: Any,
    ) -> ChatResponse:
        if self._role == "judge":
            return self._session.judge_reply(question)
        return self._session.next_response(self._role, messages, tools, temperature)


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


__all__ = ["VERDICT_KEYS", "CassetteDivergence", "ChatModel", "ReplayChatModel", "ReplaySession", "StaleCassette"]
