"""Scoring the sample in worker processes (``agent-evals live --jobs N``).

Each worker is forked with its own :class:`~agent_evals.live.scoring.Scorer` (its own end-state
cache and judge connections); the conversations go to the workers in order and their rows come
back in order (``imap``), as the row's text and its :class:`~agent_evals.live.live_report.Facts`,
so the eval file is written by this process alone, one row at a time. A sample of fewer than
``PARALLEL_FROM`` conversations is scored here, without workers.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from agent_evals.live.eval_file import scored_row
from agent_evals.live.live_report import Facts
from agent_evals.live.policy import Policy
from agent_evals.live.scoring import LiveSnapshots, Scorer
from agent_evals.live.sources import SourceError, Unread, read_conversation
from agent_evals.live.stored import StoredConversation

PARALLEL_FROM = 64
CHUNK = 8
_SCORER: Scorer | None = None


def default_jobs() -> int:
    return max(1, min(os.cpu_count() or 1, 4))


def make_scorer(policy: Policy, portal: str | None, token: str | None, judge: bool) -> Scorer:
    snapshots = LiveSnapshots(portal_env(portal, token)) if portal else None
    return Scorer(policy, snapshots=snapshots, judge=judge)


def portal_env(portal: str, token: str | None) -> dict[str, str]:
    """What reaches the portal the conversations are read from (the live store is the portal's)."""
    return {"PORTAL_URL": portal, **({"PORTAL_TOKEN": token} if token else {})}


class Scoring(NamedTuple):
    """One scored conversation: its row's text and facts; or, for one that could not be read, a warning."""

    text: str = ""
    facts: Facts | None = None
    warning: str | None = None


def scored_rows(
    conversations: Iterable[StoredConversation | Unread], strata: Mapping[str, str], *, policy: Policy,
    portal: str | None, token: str | None, judge: bool, jobs: int, expected: int,
) -> Iterator[Scoring]:
    """Each conversation scored, in order (a line that cannot be read is a warning naming it)."""
    items = ((index, item, strata.get(item.id)) for index, item in enumerate(conversations))
    if jobs <= 1 or expected < PARALLEL_FROM:
        scorer = make_scorer(policy, portal, token, judge)
        for item in items:
            yield _scored(scorer, item)
        return
    context = multiprocessing.get_context("fork")
    with context.Pool(jobs, initializer=_start, initargs=(policy, portal, token, judge)) as pool:
        yield from pool.imap(_score, items, chunksize=CHUNK)


def _start(policy: Policy, portal: str | None, token: str | None, judge: bool) -> None:
    global _SCORER
    _SCORER = make_scorer(policy, portal, token, judge)


def _score(item: tuple[int, StoredConversation | Unread, Any]) -> Scoring:
    assert _SCORER is not None
    return _scored(_SCORER, item)


def _scored(scorer: Scorer, item: tuple[int, StoredConversation | Unread, Any]) -> Scoring:
    index, unread, stratum = item
    try:
        conversation = read_conversation(unread)
    except SourceError as exc:
        return Scoring(warning=str(exc))
    return Scoring(*scored_row(scorer.score(conversation, stratum), index))
