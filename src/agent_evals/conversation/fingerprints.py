"""Fingerprints: what a recorded conversation depended on, so a stale recording is named.

A cassette keeps three fingerprints (hashes of canonical JSON, never the text itself):

``case``   the case id, its prompt and its fixtures;
``user``   the user's definition: the simulated user's goal, persona, facts, instructions
           and temperature, or the fixed messages, or the custom class and its params;
``agent``  what the agent's model was shown on its first call: the instructions (system
           prompt), the temperature, and each offered tool's description and parameters.

The agent's part is taken at the model seam (the first agent request of the conversation),
so it fits any agent factory. :func:`differences` says what changed, one phrase each
("instructions changed", "tool validate_config's parameters changed").
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from agent_evals.llm.types import Message, ToolSpec

Fingerprint = dict[str, Any]


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def agent_fingerprint(
    messages: Sequence[Message], tools: Sequence[ToolSpec] | None, temperature: float | None
) -> Fingerprint:
    system = next((m.get("content") for m in messages[:1] if m.get("role") == "system"), "")
    return {
        "instructions": digest(system or ""),
        "temperature": temperature,
        "tools": {
            str(spec.get("function", {}).get("name")): {
                "description": digest(spec.get("function", {}).get("description") or ""),
                "parameters": digest(spec.get("function", {}).get("parameters") or {}),
            }
            for spec in tools or ()
        },
    }


def user_fingerprint(kind: str, definition: Any) -> Fingerprint:
    return {"kind": kind, "definition": digest(definition)}


def case_fingerprint(case_id: str, prompt: str | None, fixtures: Any = None) -> Fingerprint:
    out: Fingerprint = {"id": case_id, "prompt": digest(prompt or "")}
    if fixtures:  # only when the case has some: recordings of cases without fixtures stay fresh
        out["fixtures"] = digest(fixtures)
    return out


_USER_WHAT = {
    "simulated_user": "the simulated user's definition changed (goal, persona, facts, instructions or temperature)",
    "user_messages": "the fixed user messages changed",
    "class": "the custom user class or its params changed",
    "single_turn": "the single-turn prompt changed",
}


def differences(part: str, recorded: Mapping[str, Any] | None, current: Mapping[str, Any]) -> list[str]:
    """What changed between a recorded and a current fingerprint of ``part``; [] when equal or unknown."""
    if not recorded:
        return []
    if part == "case":
        return _case(recorded, current)
    if part == "user":
        return _user(recorded, current)
    if part == "agent":
        return _agent(recorded, current)
    raise ValueError(f"unknown fingerprint part {part!r}")


def _case(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    out = []
    if recorded.get("id") != current.get("id"):
        out.append(f"case id changed ({recorded.get('id')} → {current.get('id')})")
    if recorded.get("prompt") != current.get("prompt"):
        out.append("the case's prompt changed")
    if recorded.get("fixtures") != current.get("fixtures"):
        out.append("the case's fixtures changed")
    return out


def _user(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    if recorded.get("kind") != current.get("kind"):
        return [f"the user changed from {recorded.get('kind')} to {current.get('kind')}"]
    if recorded.get("definition") != current.get("definition"):
        return [_USER_WHAT.get(str(current.get("kind")), "the user's definition changed")]
    return []


def _agent(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    out = []
    if recorded.get("instructions") != current.get("instructions"):
        out.append("instructions changed")
    if recorded.get("temperature") != current.get("temperature"):
        out.append(f"temperature changed ({recorded.get('temperature')} → {current.get('temperature')})")
    old, new = recorded.get("tools") or {}, current.get("tools") or {}
    out += [f"tool {name} added" for name in new if name not in old]
    out += [f"tool {name} no longer offered" for name in old if name not in new]
    for name in (n for n in new if n in old):
        out += [f"tool {name}'s {key} changed" for key in ("description", "parameters") if old[name].get(key) != new[name].get(key)]
    return out
