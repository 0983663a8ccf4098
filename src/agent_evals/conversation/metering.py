"""Every model call of a conversation, counted by role in the run record.

:class:`MeteredModels` wraps a :class:`~agent_evals.llm.source.ModelSource`: each model it
hands out adds its usage to the record's ``usage[role]`` (also for calls of a turn that
fails later), and a failure of the simulated user's model becomes an error of kind
``user_simulator`` instead of ``model``, so the report tells the two apart.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from agent_evals.llm.source import ModelSource
from agent_evals.llm.types import ChatModel, ChatResponse, LLMError, Message, Role, ToolSpec
from agent_evals.record import KitError, RunRecord, Usage

CallObserver = Callable[[Role, str, int, Usage, bool], None]  # (role, model, started ns, usage, failed)


class UserSimulatorError(KitError):
    """The simulated user's model failed or its reply was unusable (kind ``user_simulator``)."""

    kind = "user_simulator"


class MeteredModels:
    """A model source whose models count their usage into ``record`` (see the module docstring)."""

    def __init__(self, inner: ModelSource, record: RunRecord, on_call: CallObserver | None = None) -> None:
        self._inner = inner
        self._record = record
        self._on_call = on_call
        self._handed_out: list[ChatModel] = []

    def chat_model(self, role: Role, *, model: str | None = None, default_model: str | None = None) -> ChatModel:
        inner = self._inner.chat_model(role, model=model, default_model=default_model)
        self._handed_out.append(inner)
        return MeteredChatModel(inner, role, self._record, self._on_call)

    async def aclose(self) -> None:
        """Close every model handed out (closing twice is harmless)."""
        models, self._handed_out = self._handed_out, []
        for model in models:
            closer = getattr(model, "aclose", None)
            if closer is not None:
                await closer()


class MeteredChatModel:
    def __init__(self, inner: ChatModel, role: Role, record: RunRecord, on_call: CallObserver | None = None) -> None:
        self._inner = inner
        self._role = role
        self._record = record
        self._on_call = on_call

    @property
    def model(self) -> str:
        return self._inner.model

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
        **options: Any,
    ) -> ChatResponse:
        started = time.time_ns()
        try:
            response = await self._inner.complete(messages, tools=tools, temperature=temperature, **options)
        except LLMError as exc:
            if self._on_call is not None:
                self._on_call(self._role, self.model, started, Usage(), True)
            if self._role == "user" and exc.kind == "model":
                raise UserSimulatorError(f"the simulated user's model failed: {exc}") from exc
            raise
        self._record.add_usage(self._role, response.usage)
        if self._on_call is not None:
            self._on_call(self._role, self.model, started, response.usage, False)
        return response

    async def aclose(self) -> None:
        closer = getattr(self._inner, "aclose", None)
        if closer is not None:
            await closer()
