"""The completion cap (``max_tokens``) of each role, and a model wrapper that applies one.

A reply that runs away (a small model that never stops, a simulated user that writes an
essay) costs the whole request timeout and is garbage anyway, so every request carries a
cap. The cap for a role, first that is set:

1. the explicit value: the provider config's ``max_tokens`` (agent) or ``user_max_tokens``
   (simulated user), the judge provider's ``max_tokens``;
2. the environment: ``LLM_MAX_TOKENS_AGENT``, ``LLM_MAX_TOKENS_USER``, ``LLM_MAX_TOKENS_JUDGE``;
3. the default given by the caller: the agent's ``agent.yaml`` ``max_tokens``;
4. :data:`DEFAULT_MAX_TOKENS`: agent 2048, user 300, judge 800.

(The same order as the model names: an explicit value, the role's variable, the agent
config.) Every value is a whole number from 1 to :data:`MAX_TOKENS_LIMIT`; anything else
is a configuration error naming the setting.

:func:`with_max_tokens` wraps any :class:`~agent_evals.llm.types.ChatModel` so each
request it sends carries the cap, unless the caller passes its own ``max_tokens``. A model
whose ``complete`` takes no ``max_tokens`` (an older custom wrapper) is called without one:
it keeps whatever cap it applies itself (a model from ``chat_model(role)`` has its role's).
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from agent_evals.llm.types import ChatModel, ChatResponse, LLMConfigError, Message, Role, ToolSpec

log = logging.getLogger(__name__)

ROLE_MAX_TOKENS_ENV: Mapping[Role, str] = {
    "agent": "LLM_MAX_TOKENS_AGENT",
    "user": "LLM_MAX_TOKENS_USER",
    "judge": "LLM_MAX_TOKENS_JUDGE",
}
#: Caps that fit each role: room for a long answer or a tool call carrying a whole
#: configuration (agent), one short chat message (user), a verdict with its reason (judge).
DEFAULT_MAX_TOKENS: Mapping[Role, int] = MappingProxyType({"agent": 2048, "user": 300, "judge": 800})
#: No role needs more in one reply; a larger number is a typo, or lets a runaway run on.
MAX_TOKENS_LIMIT = 32768


def max_tokens_for(
    role: Role,
    *,
    max_tokens: int | None = None,
    default_max_tokens: int | None = None,
    setting: str = "max_tokens",
    env: Mapping[str, str] | None = None,
) -> int:
    """The cap for ``role`` (see the module docstring). Raises LLMConfigError naming the
    setting (``setting`` is what ``max_tokens`` is called where it came from)."""
    if role not in ROLE_MAX_TOKENS_ENV:
        raise ValueError(f"unknown role {role!r}; allowed: {', '.join(ROLE_MAX_TOKENS_ENV)}")
    env = os.environ if env is None else env
    problems = [
        problem
        for value, name in ((max_tokens, setting), (default_max_tokens, "the default max_tokens"))
        if value is not None and (problem := max_tokens_problem(value, name))
    ]
    caps = caps_from_env(env, problems)
    if problems:
        raise LLMConfigError("; ".join(problems))
    return pick_cap(role, caps, env, max_tokens, default_max_tokens)


def max_tokens_problem(value: object, setting: str) -> str | None:
    """Why ``value`` is not a cap (naming ``setting``), or None when it is one."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_TOKENS_LIMIT:
        return None
    return f"{setting} must be a whole number of tokens from 1 to {MAX_TOKENS_LIMIT}, got {value!r}"


def caps_from_env(env: Mapping[str, str], problems: list[str]) -> dict[Role, int]:
    """The cap per role from ``LLM_MAX_TOKENS_<ROLE>``, else the default; bad values go to ``problems``."""
    caps: dict[Role, int] = dict(DEFAULT_MAX_TOKENS)
    for role, name in ROLE_MAX_TOKENS_ENV.items():
        raw = (env.get(name) or "").strip()
        if not raw:
            continue
        value = int(raw) if raw.lstrip("-").isdigit() else None
        if value is None or max_tokens_problem(value, name):
            problems.append(f"{name} must be a whole number of tokens from 1 to {MAX_TOKENS_LIMIT}, got {raw!r}")
        else:
            caps[role] = value
    return caps


def pick_cap(
    role: Role, caps: Mapping[Role, int], env: Mapping[str, str], explicit: int | None, default: int | None
) -> int:
    """Explicit, else the role's variable, else ``default``, else the built-in default (``caps``
    holds the variable's value or the built-in default)."""
    if explicit is not None:
        return explicit
    if not (env.get(ROLE_MAX_TOKENS_ENV[role]) or "").strip() and default is not None:
        return default
    return caps[role]


class CappedChatModel:
    """A chat model whose requests carry ``max_tokens`` unless the caller passes its own."""

    def __init__(self, inner: ChatModel, max_tokens: int) -> None:
        problem = max_tokens_problem(max_tokens, "max_tokens")
        if problem:
            raise LLMConfigError(problem)
        self._inner = inner
        self.max_tokens = max_tokens
        self._passes_cap = _takes_keyword(inner.complete, "max_tokens")
        if not self._passes_cap:
            log.debug("%r takes no max_tokens: its own cap applies", inner)

    @property
    def model(self) -> str:
        return self._inner.model

    @property
    def inner(self) -> ChatModel:
        return self._inner

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> ChatResponse:
        if self._passes_cap:
            options["max_tokens"] = self.max_tokens if max_tokens is None else max_tokens
        return await self._inner.complete(messages, tools=tools, temperature=temperature, **options)

    async def aclose(self) -> None:
        closer = getattr(self._inner, "aclose", None)
        if closer is not None:
            await closer()

    def __repr__(self) -> str:
        return f"CappedChatModel({self._inner!r}, max_tokens={self.max_tokens})"


def _takes_keyword(function: Any, name: str) -> bool:
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return True
    return name in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def with_max_tokens(model: ChatModel, max_tokens: int) -> CappedChatModel:
    """``model`` with the completion cap ``max_tokens`` on every request (see :class:`CappedChatModel`)."""
    return CappedChatModel(model, max_tokens)
