"""How a conversation ended, who ended it, and the kinds of error.

``EndReason`` is the one end vocabulary of the kit:

========================  ==========  ==============================================
reason                    ended by    meaning
========================  ==========  ==============================================
``done``                  user        the user got what they came for and stopped
``gave_up``               user        the user stopped without getting it
``max_turns``             limit       the case's turn limit was reached
``max_tool_rounds``       limit       the agent hit its tool-round limit in a turn
``max_tokens``            limit       the agent's reply was cut off at its completion cap
``error``                 error       the run could not go on; ``error_kind`` says why
========================  ==========  ==============================================

An **error is not a failure**: a failure is something the agent did wrong; an error is
something that kept the run from happening. ``ErrorKind`` names it:

``config``          the suite, case, provider or agent configuration is wrong
``system``          the system under test (the portal, a test repository…) or one of the agent's MCP
                    servers could not be started, reached or read, refused, or stopped during the
                    conversation (records of version 2 called the system under test's failures ``portal``)
``model``           the agent's (or judge's) model failed: unreachable, auth, rate limit after retries
``user_simulator``  the simulated user's model failed or its reply was unusable
``replay``          the cassette no longer fits the run (or is stale)
``budget``          the run's spend limit was reached
``timeout``         the conversation ran past its deadline
``interrupted``     Ctrl-C or SIGTERM
``internal``        an unexpected exception in the kit or the agent's code (a bug)
``cut_off``         a production conversation whose server stopped while the agent was answering
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

EndReason = Literal["done", "gave_up", "max_turns", "max_tool_rounds", "max_tokens", "error"]
END_REASONS: tuple[EndReason, ...] = get_args(EndReason)
EndedBy = Literal["user", "limit", "error"]
ErrorKind = Literal[
    "config", "system", "model", "user_simulator", "replay", "budget", "timeout", "interrupted", "internal",
    "cut_off",
]
ERROR_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)

_ENDED_BY: dict[EndReason, EndedBy] = {
    "done": "user",
    "gave_up": "user",
    "max_turns": "limit",
    "max_tool_rounds": "limit",
    "max_tokens": "limit",
    "error": "error",
}


def ended_by(reason: EndReason) -> EndedBy:
    return _ENDED_BY[reason]


class KitError(Exception):
    """An error that kept a run from happening; ``kind`` is its :data:`ErrorKind`.

    Subclasses set ``kind`` (``ProviderConfigError`` is ``config``, ``ServerUnavailable``
    is ``system``, ``LLMError`` is ``model``…); an instance may override it.
    """

    kind: ErrorKind = "internal"

    def __init__(self, message: str, *, kind: ErrorKind | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind


@dataclass(frozen=True)
class End:
    """The end of a conversation; ``error_kind`` and ``error`` are set when ``reason`` is ``error``."""

    reason: EndReason
    error_kind: ErrorKind | None = None
    error: str | None = None

    def __post_init__(self) -> None:
        if self.reason not in END_REASONS:
            raise ValueError(f"unknown end {self.reason!r}; allowed: {', '.join(END_REASONS)}")
        if self.reason == "error" and self.error_kind not in ERROR_KINDS:
            raise ValueError(f"an error end needs an error kind from {', '.join(ERROR_KINDS)}, got {self.error_kind!r}")
        if self.reason != "error" and (self.error_kind or self.error):
            raise ValueError(f"end {self.reason!r} carries no error")

    @property
    def by(self) -> EndedBy:
        return ended_by(self.reason)

    @classmethod
    def failed(cls, kind: ErrorKind, message: str) -> End:
        return cls("error", kind, message)

    def describe(self) -> str:
        """``done (by the user)``, ``error (system): …``."""
        if self.reason == "error":
            return f"error ({self.error_kind}): {self.error}"
        return f"{self.reason} (by the {self.by})"
