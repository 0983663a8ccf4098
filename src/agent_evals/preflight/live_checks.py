"""Before a live run: each role has an endpoint and a model that answers, and an external portal
(``PORTAL_URL``) is healthy and accepts the token. One cheap request per distinct model."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable

from agent_evals.llm.types import ChatModel, LLMConfigError, LLMError, Message, Role
from agent_evals.suites.problems import Problem
from agent_evals.llm.pricing import PriceTable
from agent_evals.llm.settings import chat_model
from agent_evals.llm.settings import resolve_model
from agent_evals.packs import built_in

PING: list[Message] = [{"role": "user", "content": "Reply with the word OK."}]
PING_TIMEOUT_S = 30.0


def check_models(roles: Iterable[tuple[Role, str | None, str | None]], *, offline: bool,
                 notes: list[str] | None = None) -> list[Problem]:
    """``roles``: (role, model override, default model). Builds each model; unless ``offline``,
    sends one request of one completion token to each distinct model. ``offline`` needs no model:
    a role without one is a note for later live runs (added to ``notes``), not a problem."""
    problems: list[Problem] = []
    models: dict[str, tuple[Role, ChatModel]] = {}
    for role, model, default in roles:
        try:
            built = chat_model(role, model=model, default_model=default)
        except LLMConfigError as exc:
            problems.append(Problem(None, f"the {role} role has no model: {_one_line(exc)}"))
            continue
        models.setdefault((getattr(built, "target", built.model)), (role, built))
    if offline:
        if notes is not None:
            notes += [f"{p.message} (a live run needs it; --offline asks no model)" for p in dict.fromkeys(problems)]
        return []
    if problems:
        return list(dict.fromkeys(problems))
    return problems + asyncio.run(_ping_all(list(models.values())))


async def _ping_all(models: list[tuple[Role, ChatModel]]) -> list[Problem]:
    results = await asyncio.gather(*(_ping(role, model) for role, model in models))
    return [p for p in results if p is not None]


async def _ping(role: Role, model: ChatModel) -> Problem | None:
    try:
        await asyncio.wait_for(model.complete(PING, max_tokens=1), PING_TIMEOUT_S)
    except LLMError as exc:
        return Problem(None, f"the {role} model does not answer: {_one_line(exc)}")
    except TimeoutError:
        return Problem(None, f"the {role} model ({getattr(model, 'target', '?')}) did not answer within {PING_TIMEOUT_S:g} s")
    finally:
        closer = getattr(model, "aclose", None)
        if closer is not None:
            await closer()
    return None


def check_prices(roles: Iterable[tuple[Role, str | None, str | None]]) -> list[Problem]:
    """With a budget: every role's model has a price (built in, or ``LLM_PRICES``), or the run
    could not know what it spends."""
    try:
        table = PriceTable.from_env(os.environ)
    except LLMConfigError as exc:
        return [Problem(None, _one_line(exc))]
    problems = []
    for role, model, default in roles:
        name = resolve_model(role, model=model, default_model=default)[0]
        if name is not None and table.price_for(name) is None:
            problems.append(Problem(None, (
                f"the {role} model {name} has no known price, so a budget cannot be enforced: give it one with "
                f"LLM_PRICES='{{\"{name}\": [input_per_1m, output_per_1m]}}' (USD per 1M tokens), or run without a budget"
            )))
    return list(dict.fromkeys(problems))


def check_external_portal() -> list[Problem]:
    """An external system the environment names (``PORTAL_URL``: that portal must answer and accept
    ``PORTAL_TOKEN``), asked through each built-in pack's system."""
    systems = {type(pack.system): pack.system for pack in built_in().values()}
    return [Problem(None, line) for system in systems.values() for line in system.preflight()]


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
