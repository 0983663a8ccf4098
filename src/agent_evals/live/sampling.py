"""Choosing which production conversations to score: a count or a rate, a seed, optional strata.

Each conversation gets a rank from a hash of the seed and its id, so the same seed picks the
same conversations again, and a conversation picked from a window is still picked from a
wider one as long as no higher-ranked one displaces it. With strata, the conversations of the
first stratum come first (by rank), then those of the second, then the rest:

``down``         the user rated it thumbs-down
``tool_errors``  a tool call did not succeed (any outcome but ``ok``)
``long``         at least ``LONG_TURNS`` user messages

A conversation still being answered is left out (it has not ended); one that was cut off is
kept (it is scored as an error of kind ``cut_off``). The sample comes back oldest first.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from agent_evals.live.store import Candidate
from agent_evals.live.stored import TURN_TIMEOUT_S
from agent_evals.record import is_one_of

Stratum = Literal["down", "tool_errors", "long"]
STRATA: tuple[Stratum, ...] = get_args(Stratum)
LONG_TURNS = 6


class SamplingError(ValueError):
    """A sampling option is wrong (the message names it and what is allowed)."""


@dataclass(frozen=True)
class SampleSpec:
    count: int | None = None
    rate: float | None = None
    seed: int = 0
    stratify: tuple[Stratum, ...] = ()

    def __post_init__(self) -> None:
        if self.count is not None and self.count < 1:
            raise SamplingError(f"count is {self.count}: give at least 1")
        if self.rate is not None and not 0 < self.rate <= 1:
            raise SamplingError(f"rate is {self.rate}: give a share above 0 and at most 1 (e.g. 0.05)")
        for stratum in self.stratify:
            if stratum not in STRATA:
                raise SamplingError(f"stratum {stratum!r} is not known; allowed: {', '.join(STRATA)}")

    def size(self, available: int) -> int:
        wanted = available
        if self.rate is not None:
            wanted = math.ceil(self.rate * available)
        if self.count is not None:
            wanted = min(wanted, self.count)
        return wanted

    def describe(self) -> str:
        parts = []
        if self.count is not None:
            parts.append(f"at most {self.count}")
        if self.rate is not None:
            parts.append(f"{self.rate:.2%}")
        parts.append(f"seed {self.seed}")
        if self.stratify:
            parts.append("stratified: " + ", ".join(self.stratify))
        return ", ".join(parts)


@dataclass
class Sample:
    ids: list[str]
    strata: dict[str, Stratum] = field(default_factory=dict)  # the sampled ones that were picked by a stratum
    available: int = 0  # finished conversations in the selection
    in_progress: int = 0  # left out: still being answered


def parse_strata(text: str | Sequence[str] | None) -> tuple[Stratum, ...]:
    items = text.split(",") if isinstance(text, str) else list(text or ())
    found: list[Stratum] = []
    for item in (item.strip() for item in items if item.strip()):
        if not is_one_of(item, STRATA):
            raise SamplingError(f"stratum {item!r} is not known; allowed: {', '.join(STRATA)}")
        found.append(item)
    return tuple(found)


def stratum_of(candidate: Candidate, strata: Sequence[Stratum]) -> Stratum | None:
    for stratum in strata:
        if stratum == "down" and candidate.rating == "down":
            return stratum
        if stratum == "tool_errors" and candidate.tool_errors > 0:
            return stratum
        if stratum == "long" and candidate.turns >= LONG_TURNS:
            return stratum
    return None


def rank(seed: int, conversation_id: str) -> bytes:
    return hashlib.blake2b(f"{seed}:{conversation_id}".encode(), digest_size=8).digest()


def select(
    candidates: Sequence[Candidate], spec: SampleSpec, *, now: float | None = None, timeout_s: float = TURN_TIMEOUT_S
) -> Sample:
    """The sample of ``candidates`` (see the module docstring)."""
    now = time.time() if now is None else now
    finished = [c for c in candidates if not (c.status == "answering" and now - c.updated_at <= timeout_s)]
    tiers = {c.id: stratum_of(c, spec.stratify) for c in finished}
    order: dict[Stratum | None, int] = {s: n for n, s in enumerate(spec.stratify)}  # None: in no stratum, last
    ranked = sorted(finished, key=lambda c: (order.get(tiers[c.id], len(order)), rank(spec.seed, c.id)))
    chosen = ranked[: spec.size(len(finished))]
    chosen.sort(key=lambda c: (c.created_at, c.id))
    return Sample(
        ids=[c.id for c in chosen],
        strata={c.id: tier for c in chosen if (tier := tiers[c.id]) is not None},
        available=len(finished),
        in_progress=len(candidates) - len(finished),
    )
