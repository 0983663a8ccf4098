"""The provider's metadata read back as the run record (:mod:`agent_evals.record`).

`read_record` raises `MetadataError` with a reason a test author can act on when the
metadata is not from the agent_evals provider (no marker), has another record version,
or is malformed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from agent_evals.record import RecordError, RunRecord, Snapshot, ToolCall

__all__ = ["MetadataError", "RunRecord", "Snapshot", "ToolCall", "read_record", "require_snapshot"]

MetadataError = RecordError


_READ: ContextVar[dict[int, tuple[Any, RunRecord]] | None] = ContextVar("agent_evals_read_records", default=None)


def read_record(metadata: Any) -> RunRecord:
    """The run record in ``metadata`` (raises MetadataError, e.g. for a tool call in no turn). Inside
    :func:`reading_once` the same metadata object is read once for all the checks that grade it."""
    memo = _READ.get()
    if memo is None:
        return RunRecord.from_metadata(metadata)
    found = memo.get(id(metadata))
    if found is None or found[0] is not metadata:
        found = (metadata, RunRecord.from_metadata(metadata))
        memo[id(metadata)] = found
    return found[1]


@contextmanager
def reading_once() -> Iterator[None]:
    """While grading one row's checks: each metadata object is read into a record once (the checks do not
    change it)."""
    token = _READ.set({})
    try:
        yield
    finally:
        _READ.reset(token)


def require_snapshot(record: RunRecord) -> Snapshot:
    """The end-state snapshot the provider took when the conversation ended (raises MetadataError)."""
    if record.snapshot is None:
        raise MetadataError(
            "the metadata has no end-state snapshot ('snapshot'): the provider takes one when the conversation "
            "ends; this row comes from another provider or an older kit"
        )
    return record.snapshot
