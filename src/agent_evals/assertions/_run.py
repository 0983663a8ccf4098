"""The provider's metadata read back as the run record (:mod:`agent_evals.record`).

`read_record` raises `MetadataError` with a reason a test author can act on when the
metadata is not from the agent_evals provider (no marker), has another record version,
or is malformed.
"""

from __future__ import annotations

from typing import Any

from agent_evals.record import RecordError, RunRecord, Snapshot, ToolCall

__all__ = ["MetadataError", "RunRecord", "Snapshot", "ToolCall", "read_record", "require_snapshot"]

MetadataError = RecordError


def read_record(metadata: Any) -> RunRecord:
    """The run record in ``metadata`` (raises MetadataError, e.g. for a tool call in no turn)."""
    return RunRecord.from_metadata(metadata)


def require_snapshot(record: RunRecord) -> Snapshot:
    """The end-state snapshot the provider took when the conversation ended (raises MetadataError)."""
    if record.snapshot is None:
        raise MetadataError(
            "the metadata has no end-state snapshot ('snapshot'): the provider takes one when the conversation "
            "ends; this row comes from another provider or an older kit"
        )
    return record.snapshot
