"""What ``agent-evals live promote`` writes, built from a stored conversation (pure).

* :func:`case_entry` — the case (a suite's case-file entry): the id at the start of the
  description, ``metadata: {id, group: from-production, priority: full, from_conversation}``, the
  user side (the user's own messages as ``vars.user_messages``, or a simulated-user brief), the
  fixtures the pack found, and the checks the policy applied to the conversation, each as the
  suite writes a kit check (one the suite's ``defaultTest`` already has is left out);
* :func:`plan_entry` — its golden plan entry (``golden/plan.yaml``): the agent's model replies in
  order, as they were recorded in the conversation's history (``call`` / ``calls`` / ``say``),
  with the links and ids of pull requests the conversation created turned into ``$find``
  placeholders (a replay creates new ones), and for a simulated user its lines (the real user's
  messages, then ``[DONE]``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from agent_evals.live.policy import PolicyCheck
from agent_evals.live.stored import StoredConversation
from agent_evals.record import RunRecord

GROUP = "from-production"
_DIGITS = re.compile(r"\d+")
_FIRST = 60


def case_entry(
    case_id: str, conversation: StoredConversation, checks: Sequence[PolicyCheck], *, defaults: Sequence[Mapping[str, Any]],
    brief: Mapping[str, Any] | None, fixtures: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    messages = user_messages(conversation)
    first = " ".join(messages[0].split()) if messages else "(no message)"
    shown = first if len(first) <= _FIRST else first[: _FIRST - 1] + "…"
    vars_: dict[str, Any] = {}
    if fixtures:
        vars_["fixtures"] = [dict(f) for f in fixtures]
    if brief is not None:
        vars_["simulated_user"] = dict(brief)
    else:
        vars_["user_messages"] = messages
    listed = {(d.get("value"), json.dumps(d.get("config"), sort_keys=True)) for d in defaults}
    asserts = [c.assertion() for c in checks
               if not (c.name == "goal_reached" and brief is None)  # a goal needs a simulated user's goal
               and (c.assertion()["value"], json.dumps(c.config, sort_keys=True)) not in listed]
    return {
        "description": f"{case_id} from production: {shown}",
        "metadata": {"id": case_id, "group": GROUP, "priority": "full", "from_conversation": conversation.id},
        "vars": vars_,
        "assert": asserts,
    }


def user_messages(conversation: StoredConversation) -> list[str]:
    return [turn.user for turn in conversation.record.turns]


def plan_entry(conversation: StoredConversation, *, simulated: bool) -> dict[str, Any]:
    """The golden plan entry: the agent's recorded replies (and the user's lines, for a simulated user)."""
    created = _addressed(conversation.record)
    steps: list[dict[str, Any]] = []
    made: set[int] = set()
    for message in conversation.history:
        if message.get("role") == "tool":
            made |= _created_in(message, created)
            continue
        if message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls") or []
        if calls:
            parsed = [{c["function"]["name"]: _arguments(c["function"].get("arguments"), created, made)} for c in calls]
            steps.append({"call": parsed[0]} if len(parsed) == 1 else {"calls": parsed})
        else:
            steps.append({"say": _links(str(message.get("content") or ""), created)})
    entry: dict[str, Any] = {"agent": steps}
    if simulated:
        entry["user"] = [*user_messages(conversation), "[DONE]"]
    return entry


def _addressed(record: RunRecord) -> dict[int, str]:
    """The side effects with a link and a number (a pull request…): a replay makes them again under new
    numbers, so the plan finds each by its link's pattern."""
    return {int(s.id): s.url for s in record.side_effects if s.url and s.id.isascii() and s.id.isdigit()}


def _created_in(message: Mapping[str, Any], created: Mapping[int, str]) -> set[int]:
    """The pull requests this tool result shows as created (so later references are the replay's)."""
    text = str(message.get("content") or "")
    return {pr_id for pr_id, url in created.items() if url in text}


def url_pattern(url: str) -> str:
    """A regex for a link like ``url`` on any portal, the id any number (no parentheses: a whole match)."""
    rest = url.split("://", 1)[-1].partition("/")[2]
    return r"https?://[^\s/]+/" + _DIGITS.sub(lambda _: r"\d+", re.escape(rest))


def _links(text: str, created: Mapping[int, str]) -> str:
    for url in sorted(created.values(), key=len, reverse=True):
        text = text.replace(url, f"$find({url_pattern(url)})")
    return text


def _arguments(raw: Any, created: Mapping[int, str], made: set[int]) -> Any:
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        return raw
    return _replace_ids(value, {pr_id: created[pr_id] for pr_id in made})


def _replace_ids(value: Any, made: Mapping[int, str]) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in made:
        return {"$find": _last_group(url_pattern(made[value]))}
    if isinstance(value, dict):
        return {k: _replace_ids(v, made) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_ids(v, made) for v in value]
    if isinstance(value, str):
        for url in made.values():
            value = value.replace(url, f"$find({url_pattern(url)})")
    return value


def _last_group(pattern: str) -> str:
    """The pattern with its last ``\\d+`` (the id) as the one group."""
    head, sep, tail = pattern.rpartition(r"\d+")
    return f"{head}(\\d+){tail}" if sep else pattern
