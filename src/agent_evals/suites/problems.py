"""One problem found before a run: where, what is wrong, and what would be right."""

from __future__ import annotations

from dataclasses import dataclass
import difflib

from agent_evals.suites.files import Located


@dataclass(frozen=True)
class Problem:
    where: Located | str | None
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


def did_you_mean(name: str, known: list[str]) -> str:
    """``; did you mean validate_config?`` when a known name is close, else ''."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""
