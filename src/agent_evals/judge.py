"""The grader model for model-graded assertions (``llm-rubric``), as a Promptfoo provider.

``providers/judge.py`` exposes :func:`call_api`; a suite names it as its grader::

    defaultTest:
      options:
        provider: file://../../providers/judge.py

It sends Promptfoo's grading prompt to the ``judge`` role of the LLM layer
(``JUDGE_MODEL`` on the configured endpoint, falling back to ``AGENT_MODEL``), at
temperature 0. With no endpoint configured, model-graded assertions are not graded
at all: see :func:`model_graded_asserts` and the ``beforeEach`` hook.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

MODEL_GRADED_TYPES = frozenset(
    {
        "llm-rubric",
        "model-graded-closedqa",
        "model-graded-factuality",
        "factuality",
        "g-eval",
        "answer-relevance",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "select-best",
        "search-rubric",
        "trajectory:goal-success",
    }
)


def judge_configured(env: Mapping[str, str] | None = None) -> bool:
    """True when an LLM endpoint and a model for the judge role are configured.

    ``JUDGE_MODEL=none`` switches grading by a model off explicitly.
    """
    import os

    from agent_evals.llm.settings import llm_configured, resolve_model

    env = os.environ if env is None else env
    if env.get("JUDGE_MODEL", "").strip().lower() == "none":
        return False
    return llm_configured(env) and resolve_model("judge", env=env)[0] is not None


def model_graded_asserts(asserts: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The assertions (also negated ``not-…``) that need a grader model."""
    return [a for a in asserts if str(a.get("type", "")).removeprefix("not-") in MODEL_GRADED_TYPES]


def grading_messages(prompt: str) -> list[dict[str, str]]:
    """Promptfoo's grading prompt is a JSON list of chat messages, or plain text."""
    try:
        parsed = json.loads(prompt)
    except (ValueError, TypeError):
        parsed = None
    if isinstance(parsed, list) and all(isinstance(m, dict) and "role" in m and "content" in m for m in parsed):
        return [{"role": str(m["role"]), "content": str(m["content"])} for m in parsed]
    return [{"role": "user", "content": prompt}]


async def _grade(prompt: str, model: str | None) -> dict[str, Any]:
    from agent_evals.agent.factory import close_model
    from agent_evals.llm.settings import chat_model

    judge = chat_model("judge", model=model)
    try:
        response = await judge.complete(grading_messages(prompt), temperature=0.0)
    finally:
        await close_model(judge)
    usage = response.usage
    return {
        "output": response.content or "",
        "tokenUsage": {
            "total": usage.total_tokens,
            "prompt": usage.prompt_tokens,
            "completion": usage.completion_tokens,
            "numRequests": usage.calls,
        },
        "cost": usage.cost,
    }


def call_api(prompt: str, options: Mapping[str, Any] | None, context: Mapping[str, Any] | None) -> dict[str, Any]:
    """Promptfoo's provider entry point (config key ``model`` overrides JUDGE_MODEL)."""
    import asyncio  # here, not at the top: the hooks import this module in a fresh process per call

    from agent_evals.llm.types import LLMError

    config = (options or {}).get("config") or {}
    try:
        return asyncio.run(_grade(prompt, config.get("model")))
    except LLMError as exc:
        return {"error": f"grader model: {exc}"}
