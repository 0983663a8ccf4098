"""The simulated user's situation, as a domain pack states it (plain data: cheap to import)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UserFraming:
    """The simulated user's situation, from the suite's domain pack: who and where they are
    (``setting``), what they don't know (``knows_inside``) and when their task is done (``done_when``).

    What the checks of the user's side need (:mod:`agent_evals.user_checks`), all optional:

    - ``outcome``: the goal's observable outcome, named for people (``the ticket's link``), with
      ``outcome_pattern``, a regular expression that finds it in the assistant's replies, and
      ``outcome_wanted``, a regular expression on the goal that says the goal asks for it (empty:
      whenever there is a pattern). A user that stops while it is wanted, not given yet, and the
      assistant still asks or works ended too early;
    - ``values``: ``(kind, regular expression)`` pairs for the domain's values the user may invent
      (``("queue", r"\\bqueue-[a-z]+\\b")``), checked beside the kit's own (names, address ranges,
      IP and e-mail addresses, links, IDs, numbers).
    """

    setting: str = (
        "You are role-playing a person who is chatting with an AI assistant. You are the user, not the assistant."
    )
    knows_inside: str = "how the assistant or its systems work inside"
    done_when: str = "when the assistant has done what you asked, or has told you clearly that it can't do it"
    outcome: str = ""
    outcome_pattern: str = ""
    outcome_wanted: str = ""
    values: tuple[tuple[str, str], ...] = ()
