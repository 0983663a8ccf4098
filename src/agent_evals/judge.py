"""The grader model for model-graded assertions (``llm-rubric``), as a Promptfoo provider.

``providers/judge.py`` exposes :func:`call_api`; a suite names it as its grader::

    defaultTest:
      options:
        provider: file://../../providers/judge.py

It sends Promptfoo's grading prompt to the ``judge`` role of the LLM layer
(``JUDGE_MODEL`` on the configured endpoint, falling back to ``AGENT_MODEL``), at
temperature 0, with the judge's completion cap (``LLM_MAX_TOKENS_JUDGE``, default 800).
With no endpoint configured, model-graded assertions are not graded at all: the ``beforeEach``
hook takes them out and lists them (``hooks/kit.js``).

A reply is usable when it was not cut off at the cap, is not empty, and — when the
grading prompt asks for a JSON verdict, as ``llm-rubric``'s does — holds a JSON object
with a boolean ``pass`` (Promptfoo reads the first object and counts one without ``pass``
as a pass). Then that object is the output. An unusable reply is asked for once more;
a second one is a Promptfoo ``error`` of kind ``model``: ``[model] the judge's reply was
unusable twice: …``. Every answer carries the judge's ``tokenUsage`` and ``cost``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any
import asyncio
import os

from agent_evals.llm.types import ChatResponse, Usage
from agent_evals.llm.caps import max_tokens_for
from agent_evals.llm.settings import chat_model
from agent_evals.llm.settings import llm_configured, resolve_model
from agent_evals.llm.types import LLMError

log = logging.getLogger(__name__)

JUDGE_ATTEMPTS = 2
_JSON_WORD = re.compile(r"\bjson\b", re.IGNORECASE)
_PASS_WORD = re.compile(r"\bpass\b", re.IGNORECASE)
_PASS_WORDS = frozenset({"true", "false", "yes", "no", "pass", "fail", "y", "n"})
_PREVIEW_CHARS = 80
JUDGE_OFF = "none"  # JUDGE_MODEL=none: no grading by a model, even with an endpoint configured

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
    env = os.environ if env is None else env
    if env.get("JUDGE_MODEL", "").strip().lower() == JUDGE_OFF:
        return False
    return llm_configured(env) and resolve_model("judge", env=env)[0] is not None


def grading_messages(prompt: str) -> list[dict[str, str]]:
    """Promptfoo's grading prompt is a JSON list of chat messages, or plain text."""
    try:
        parsed = json.loads(prompt)
    except (ValueError, TypeError):
        parsed = None
    if isinstance(parsed, list) and all(isinstance(m, dict) and "role" in m and "content" in m for m in parsed):
        return [{"role": str(m["role"]), "content": str(m["content"])} for m in parsed]
    return [{"role": "user", "content": prompt}]


def asks_for_verdict(messages: Sequence[Mapping[str, str]]) -> bool:
    """Whether the grading prompt asks for a JSON verdict (``llm-rubric``: ``{reason, pass, score}``)."""
    text = "\n".join(m["content"] for m in messages)
    return bool(_JSON_WORD.search(text) and _PASS_WORD.search(text))


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (the one Promptfoo's ``llm-rubric`` reads), or None."""
    decoder = json.JSONDecoder()
    for start in (i for i, char in enumerate(text) if char == "{"):
        try:
            value, _end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def verdict_problem(verdict: Mapping[str, Any] | None) -> str | None:
    """Why ``verdict`` is not a usable ``{pass, score, reason}`` object, or None.

    ``pass`` is required: Promptfoo counts an object without it as a pass.
    """
    if verdict is None:
        return "no JSON object with pass/score/reason in it"
    value = verdict.get("pass")
    if isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in _PASS_WORDS):
        return None
    if "pass" not in verdict:
        return f"its JSON object has no 'pass' (keys: {', '.join(map(str, verdict)) or 'none'})"
    return f"its 'pass' is not a boolean: {value!r}"


def reply_problem(response: ChatResponse, *, cap: int, wants_verdict: bool) -> tuple[str | None, str]:
    """``(why the judge's reply is unusable or None, the output to give Promptfoo)``."""
    text = response.content or ""
    if response.finish_reason == "length":
        return f"cut off at {cap} tokens (LLM_MAX_TOKENS_JUDGE, or the judge's max_tokens): {_preview(text)}", text
    if not text.strip():
        return "an empty reply", text
    if not wants_verdict:
        return None, text
    verdict = first_json_object(text)
    problem = verdict_problem(verdict)
    if problem is not None:
        return f"{problem}: {_preview(text)}", text
    return None, json.dumps(verdict)  # exactly what was checked is what Promptfoo reads


def _preview(text: str) -> str:
    line = " ".join(text.split())
    return repr(line if len(line) <= _PREVIEW_CHARS else line[: _PREVIEW_CHARS - 1] + "…")


async def _grade(prompt: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """Ask the judge; an unusable reply is asked again once, then is an error of kind ``model``."""
    from agent_evals.agent.factory import close_model  # lazy: loads pydantic only when used (start-up time)

    cap = max_tokens_for("judge", max_tokens=config.get("max_tokens"), setting="the judge's max_tokens")
    judge = chat_model("judge", model=config.get("model"), max_tokens=cap)
    messages = grading_messages(prompt)
    wants_verdict = asks_for_verdict(messages)
    usage, problem = Usage(), None
    try:
        for attempt in range(1, JUDGE_ATTEMPTS + 1):
            response = await judge.complete(messages, temperature=0.0)
            usage = usage + response.usage
            problem, output = reply_problem(response, cap=cap, wants_verdict=wants_verdict)
            if problem is None:
                return {"output": output, **_spent(usage)}
            log.warning("the judge's reply was unusable (attempt %d/%d): %s", attempt, JUDGE_ATTEMPTS, problem)
    finally:
        await close_model(judge)
    return {"error": f"[model] the judge's reply was unusable twice: {problem}", **_spent(usage)}


def _spent(usage: Usage) -> dict[str, Any]:
    return {
        "tokenUsage": {
            "total": usage.total_tokens,
            "prompt": usage.prompt_tokens,
            "completion": usage.completion_tokens,
            "numRequests": usage.calls,
        },
        "cost": usage.cost,
    }


def call_api(prompt: str, options: Mapping[str, Any] | None, context: Mapping[str, Any] | None) -> dict[str, Any]:
    """Promptfoo's provider entry point (config keys: ``model`` overrides JUDGE_MODEL,
    ``max_tokens`` overrides LLM_MAX_TOKENS_JUDGE)."""
    config = (options or {}).get("config") or {}
    try:
        return asyncio.run(_grade(prompt, config))
    except LLMError as exc:
        return {"error": f"[{exc.kind}] the judge's model failed: {exc}"}
