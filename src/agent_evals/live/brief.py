"""A simulated-user brief drafted by the judge model from a real conversation (``live promote --user simulated``).

The judge reads the user's own messages (and the conversation, for context) and drafts what a
simulated user needs to hold the same conversation: ``goal`` (what the user wanted, and how they
know it is done), ``persona`` (how they write) and ``facts`` (every value they gave: names,
regions, ranges, ids). A reply that is not such a JSON object is asked for once more; a second one
is a :class:`BriefError` (kind ``model``). The brief goes into the case file for review.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from agent_evals.judge import first_json_object
from agent_evals.judging.questions import transcript
from agent_evals.record import KitError, RunRecord
from agent_evals.llm.source import LiveModels

ATTEMPTS = 2
SYSTEM = """You turn a real conversation between a user and an AI assistant into a brief for a simulated \
user who will hold the same conversation in a test. Base the brief only on what the user wrote. Reply \
with one JSON object and nothing else: {"goal": "what the user wanted, and what they must get to be \
done, in one or two sentences", "persona": "who they are and how they write, in one sentence", \
"facts": {"<what>": "<value the user gave>", ...}}. Put every name, region, address range, id or other \
value the user gave in facts; never add one the user did not give."""


class BriefError(KitError):
    kind = "model"


def draft_brief(record: RunRecord) -> dict[str, Any]:
    return asyncio.run(_draft(record))


async def _draft(record: RunRecord) -> dict[str, Any]:
    said = "\n".join(f"- {turn.user}" for turn in record.turns)
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"What the user wrote, in order:\n{said}\n\nThe conversation:\n{transcript(record)}"}]
    model = LiveModels().chat_model("judge")
    problem = ""
    try:
        for _ in range(ATTEMPTS):
            response = await model.complete(messages, temperature=0.0)
            brief, problem = read_brief(response.content or "")
            if brief is not None:
                return brief
    finally:
        closer = getattr(model, "aclose", None)
        if closer is not None:
            await closer()
    raise BriefError(f"the judge's draft of a simulated-user brief was not one, twice: {problem}")


def read_brief(text: str) -> tuple[dict[str, Any] | None, str]:
    found = first_json_object(text)
    if not isinstance(found, Mapping):
        return None, f"no JSON object in {text[:80]!r}"
    goal, persona, facts = found.get("goal"), found.get("persona"), found.get("facts", {})
    if not isinstance(goal, str) or not goal.strip():
        return None, "no 'goal'"
    if not isinstance(facts, Mapping) or not all(isinstance(v, str | int | float) for v in facts.values()):
        return None, "'facts' must map names to values"
    brief: dict[str, Any] = {"goal": goal.strip()}
    if isinstance(persona, str) and persona.strip():
        brief["persona"] = persona.strip()
    if facts:
        brief["facts"] = {str(k): v for k, v in facts.items()}
    return brief, ""
