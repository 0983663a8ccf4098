"""The simulated user's situation, as a domain pack states it (plain data: cheap to import)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UserFraming:
    """The simulated user's situation, from the suite's domain pack: who and where they are
    (``setting``), what they don't know (``knows_inside``) and when their task is done (``done_when``)."""

    setting: str = (
        "You are role-playing a person who is chatting with an AI assistant. You are the user, not the assistant."
    )
    knows_inside: str = "how the assistant or its systems work inside"
    done_when: str = "when the assistant has done what you asked, or has told you clearly that it can't do it"
