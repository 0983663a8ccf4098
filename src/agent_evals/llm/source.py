"""Where chat models come from: a :class:`ModelSource` hands out one model per role.

The agent factory and the user simulators ask a source for their model instead of
reading the environment themselves, so the provider chooses once, at one seam, whether a
run is live, recorded or replayed (``agent_evals.conversation.replay``), and can meter
every call by role. :class:`LiveModels` is the production source: the endpoint and model
names from the environment (``agent_evals.llm.settings``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agent_evals.llm.types import ChatModel, Role
from agent_evals.llm.settings import chat_model


@runtime_checkable
class ModelSource(Protocol):
    def chat_model(self, role: Role, *, model: str | None = None, default_model: str | None = None) -> ChatModel:
        """The model for ``role``: ``model`` if given, else the role's configured model, else ``default_model``."""
        ...


class LiveModels:
    """Models on the endpoint configured in the environment."""

    def chat_model(self, role: Role, *, model: str | None = None, default_model: str | None = None) -> ChatModel:
        return chat_model(role, model=model, default_model=default_model)
