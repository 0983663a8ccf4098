"""Phrasing styles: how the simulated user of a generated case talks.

A row picks one with its ``style`` column (default ``plain``); the style gives the simulated
user's ``persona`` and ``instructions`` unless the template sets them, and is available to
the template as ``{style}``, ``{persona}`` and ``{instructions}`` (the golden plan's user
lines usually differ per style). A suite's templates file may redefine these or add its own
under ``styles:`` (``{name: {persona: ..., instructions: ...}}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Style:
    persona: str
    instructions: str = ""


BUILT_IN: Mapping[str, Style] = {
    "plain": Style("Plain and polite; writes short chat messages."),
    "terse": Style("Terse: a few words per message, no greetings, no full sentences."),
    "chatty": Style(
        "Chatty and friendly: greets, says why the request matters, thanks warmly; the details are still exact."
    ),
    "command": Style("Writes like a command line: imperative, no greetings, every detail in one line."),
    "on_request": Style(
        "Polite but brief; expects the assistant to ask for what it needs.",
        "In your first message say only what you want, without any of the details in your facts; give each "
        "detail only when the assistant asks for it.",
    ),
}


def read_styles(raw: Any) -> dict[str, Style]:
    """The built-in styles with a templates file's ``styles:`` on top (raises ValueError)."""
    styles = dict(BUILT_IN)
    if raw is None:
        return styles
    if not isinstance(raw, Mapping):
        raise ValueError("styles must be a mapping of style names to {persona, instructions}")
    for name, spec in raw.items():
        if not isinstance(spec, Mapping) or not isinstance(spec.get("persona"), str) or not spec["persona"].strip():
            raise ValueError(f"style {name!r} needs a persona (text)")
        unknown = sorted(set(spec) - {"persona", "instructions"})
        if unknown:
            raise ValueError(f"style {name!r}: unknown key(s) {', '.join(unknown)}; allowed: persona, instructions")
        styles[str(name)] = Style(spec["persona"].strip(), str(spec.get("instructions") or "").strip())
    return styles
