"""Live, recording or replaying: chosen once per conversation, at one seam.

A :class:`RunMode` hands the agent and the user their models (``models``), may wrap the
agent's tools (``wrap_tools``), watches the conversation (``on_user_message``,
``on_turn``), asks the judge about it (``judge_unavailable``, ``ask_judge``) and closes
it (``finish``). The provider builds one with :func:`run_mode` and otherwise does not
care which it is:

* :class:`LiveMode` — models on the configured endpoint;
* :class:`RecordingMode` — live models whose every response is kept, with the
  fingerprints and, for the judge's, the question each answered; ``finish`` writes the
  cassette;
* :class:`ReplayingMode` — the cassette's responses (:class:`~.replay.ReplaySession`);
  the tools run for real and are checked against the recording; the judge's recorded
  replies answer the same questions again (a cassette without any: the judged checks are
  not graded).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, cast

from agent_evals.agent.loop import ToolExecutor
from agent_evals.conversation.cassette import Cassette, ModelCall, save_cassette
from agent_evals.conversation.fingerprints import agent_fingerprint
from agent_evals.conversation.replay import ReplaySession
from agent_evals.llm.source import LiveModels, ModelSource
from agent_evals.llm.types import ChatModel, ChatResponse, Message, Role, ToolSpec
from agent_evals.record import KitError, RunRecord
from agent_evals.judge import judge_configured

log = logging.getLogger(__name__)

ModeKind = Literal["live", "record", "replay"]
ToolWrapper = Callable[[ToolExecutor], ToolExecutor]


class RunMode:
    """Live by default; the subclasses record or replay."""

    kind: ModeKind = "live"

    def __init__(self, models: ModelSource | None = None) -> None:
        self.models: ModelSource = models or LiveModels()

    @property
    def wrap_tools(self) -> ToolWrapper | None:
        return None

    def start(self, fingerprints: dict[str, Any]) -> None:
        """Before the conversation: the case's and the user's fingerprints."""

    def fixtures_made(self, fixtures: list[dict[str, Any]]) -> None:
        """The case's fixtures, made before the conversation (the run record's ``fixtures``)."""

    def on_user_message(self, number: int, text: str) -> None:
        """Before the agent sees user message ``number``."""

    def on_turn(self, record: RunRecord) -> None:
        """After each turn."""

    def finish(self, record: RunRecord) -> None:
        """After the conversation and its judging (also after an error)."""

    def judge_unavailable(self) -> str | None:
        """None when the judge can answer; else why not (the judged checks are then NOT GRADED)."""
        if judge_configured():
            return None
        return "no judge model is configured (JUDGE_MODEL and an LLM endpoint; JUDGE_MODEL=none switches it off)"

    async def ask_judge(self, models: ModelSource, question: str, messages: Sequence[Message], **options: Any) -> ChatResponse:
        """One question to the judge (``question`` names it: :func:`agent_evals.record.question_key`)."""
        return await models.chat_model("judge").complete(messages, **options)

    def judge_cannot_answer(self, question: str) -> str | None:
        """None when the judge can answer ``question``; else why not (a replay without its reply)."""
        return self.judge_unavailable()

    def replay_info(self) -> dict[str, Any] | None:
        return None


class LiveMode(RunMode):
    kind: ModeKind = "live"


class RecordingMode(RunMode):
    """Records every model response of every role, and the fingerprints, into ``path``."""

    kind: ModeKind = "record"

    def __init__(self, path: Path, case_id: str, models: ModelSource | None = None) -> None:
        super().__init__(_RecordingModels(models or LiveModels(), self))
        self.path = path
        self.case_id = case_id
        self.calls: list[ModelCall] = []
        self.fingerprints: dict[str, Any] = {}

    def start(self, fingerprints: dict[str, Any]) -> None:
        self.fingerprints.update(fingerprints)

    async def ask_judge(self, models: ModelSource, question: str, messages: Sequence[Message], **options: Any) -> ChatResponse:
        return await _judge_by_question(models).complete(messages, question=question, **options)

    def finish(self, record: RunRecord) -> None:
        cassette = Cassette(self.case_id, record, self.calls, self.fingerprints)
        try:
            save_cassette(cassette, self.path)
        except OSError as exc:
            raise KitError(f"could not write cassette {self.path}: {exc}", kind="config") from exc


class _QuestionedChatModel(Protocol):
    """The judge of a recording or a replay: its ``complete`` takes the ``question`` a reply answers (the
    recording stores it with the reply, the replay serves the reply by it); metering passes it on."""

    async def complete(self, messages: Sequence[Message], *, question: str | None = None, **options: Any) -> ChatResponse:
        ...


def _judge_by_question(models: ModelSource) -> _QuestionedChatModel:
    # ChatModel's protocol has no `question`: only the recording's and the replay's own models (under
    # the metering, which passes keywords on) take one, and only these modes call this.
    return cast(_QuestionedChatModel, models.chat_model("judge"))


class _RecordingModels:
    def __init__(self, inner: ModelSource, mode: RecordingMode) -> None:
        self._inner = inner
        self._mode = mode

    def chat_model(self, role: Role, *, model: str | None = None, default_model: str | None = None) -> ChatModel:
        return _RecordingChatModel(self._inner.chat_model(role, model=model, default_model=default_model), role, self._mode)


class _RecordingChatModel:
    def __init__(self, inner: ChatModel, role: Role, mode: RecordingMode) -> None:
        self._inner = inner
        self._role = role
        self._mode = mode

    @property
    def model(self) -> str:
        return self._inner.model

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
        question: str | None = None,
        **options: Any,
    ) -> ChatResponse:
        if self._role == "agent" and "agent" not in self._mode.fingerprints:
            self._mode.fingerprints["agent"] = agent_fingerprint(messages, tools, temperature)
        response = await self._inner.complete(messages, tools=tools, temperature=temperature, **options)
        self._mode.calls.append(ModelCall(self._role, response, question))
        return response

    async def aclose(self) -> None:
        closer = getattr(self._inner, "aclose", None)
        if closer is not None:
            await closer()


class ReplayingMode(RunMode):
    """Serves the cassette's responses; the tools run for real, checked against the recording."""

    kind: ModeKind = "replay"

    def __init__(self, session: ReplaySession) -> None:
        super().__init__(_ReplayModels(session))
        self.session = session

    @property
    def wrap_tools(self) -> ToolWrapper | None:
        return self.session.wrap_tools

    def start(self, fingerprints: dict[str, Any]) -> None:
        for part in ("case", "user"):
            if part in fingerprints:
                self.session.check_fingerprint(part, fingerprints[part])

    def fixtures_made(self, fixtures: list[dict[str, Any]]) -> None:
        self.session.learn_fixtures(fixtures)

    def on_user_message(self, number: int, text: str) -> None:
        self.session.check_user_message(number, text)

    def on_turn(self, record: RunRecord) -> None:
        self.session.check_turn(record)

    def finish(self, record: RunRecord) -> None:
        self.session.finish(record)

    def judge_unavailable(self) -> str | None:
        if self.session.has_judge_replies:
            return None
        return f"the cassette {self.session.name} holds no judge replies (it was recorded without a judge)"

    def judge_cannot_answer(self, question: str) -> str | None:
        if self.session.has_judge_reply(question):
            return None
        return f"the cassette {self.session.name} holds no judge reply to this question"

    async def ask_judge(self, models: ModelSource, question: str, messages: Sequence[Message], **options: Any) -> ChatResponse:
        return await _judge_by_question(models).complete(messages, question=question, **options)

    def replay_info(self) -> dict[str, Any] | None:
        return self.session.replay_info()


class _ReplayModels:
    def __init__(self, session: ReplaySession) -> None:
        self._session = session

    def chat_model(self, role: Role, *, model: str | None = None, default_model: str | None = None) -> ChatModel:
        return self._session.model(role)
