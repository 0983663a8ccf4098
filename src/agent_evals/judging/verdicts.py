"""Reading the judge's reply as a verdict, or saying why it is not one.

A verdict is the first JSON object in the reply with a boolean ``pass`` (``"yes"``/``"no"``,
``"true"``/``"false"`` are read as booleans too) — the same test the judge provider
(:mod:`agent_evals.judge`) applies to ``llm-rubric`` verdicts — a ``reason`` (text; a missing
one is shown as such), and for scored questions a ``score`` from 0 to 1 (without one, the
score follows ``pass``). A reply cut off at the completion cap, an empty one, or one without
such an object is not a verdict.
"""

from __future__ import annotations

from typing import Any

from agent_evals.judge import first_json_object, verdict_problem
from agent_evals.llm.types import ChatResponse
from agent_evals.record import Verdict

_YES = frozenset({"true", "yes", "y", "pass"})  # verdict_problem accepts these and their opposites
_PREVIEW = 80


def read_verdict(response: ChatResponse, subject: str, *, scored: bool) -> tuple[Verdict | None, str | None]:
    """``(verdict, None)`` or ``(None, why the reply is not a verdict)``."""
    text = response.content or ""
    if response.finish_reason == "length":
        return None, f"cut off at the judge's completion cap (LLM_MAX_TOKENS_JUDGE): {_preview(text)}"
    if not text.strip():
        return None, "an empty reply"
    found = first_json_object(text)
    problem = verdict_problem(found)  # the judge provider's own test of a verdict: a boolean 'pass'
    if found is None or problem is not None:
        return None, f"{problem}: {_preview(text)}"
    score = found.get("score")
    if scored and score is not None and not (isinstance(score, int | float) and not isinstance(score, bool) and 0 <= score <= 1):
        return None, f"'score' is {score!r}, not a number from 0 to 1: {_preview(text)}"
    reason = found.get("reason")
    reason = " ".join(reason.split()) if isinstance(reason, str) and reason.strip() else "(the judge gave no reason)"
    return Verdict(subject, _boolean(found["pass"]), reason, float(score) if scored and score is not None else None), None


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in _YES


def _preview(text: str) -> str:
    line = " ".join(text.split())
    return repr(line if len(line) <= _PREVIEW else line[: _PREVIEW - 1] + "…")
