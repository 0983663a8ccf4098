"""The repository snapshot a release check grades, from the run record's end-state snapshot.

The one place the checks learn where the pack's end state sits in the record (today the
snapshot's resource ``repository``); when the System protocol gives packs a snapshot of their
own, only this function changes.
"""

from __future__ import annotations

from typing import Any

from agent_evals.authoring import MetadataError, RunRecord, read_record, require_snapshot
from agent_evals.packs.release.snapshot import RESOURCE, RepositorySnapshot, SnapshotError


def repository_snapshot(metadata: Any) -> tuple[RunRecord, RepositorySnapshot]:
    """The run record and its repository snapshot (raises MetadataError naming what is missing)."""
    run = read_record(metadata)
    raw = require_snapshot(run).resources.get(RESOURCE)
    if raw is None:
        raise MetadataError(
            f"the end-state snapshot has no repository state (resource {RESOURCE!r}): this row was not run "
            "against the release pack's repository"
        )
    try:
        return run, RepositorySnapshot.from_dict(raw)
    except SnapshotError as exc:
        raise MetadataError(f"the snapshot's resource {RESOURCE!r} is not a repository snapshot: {exc}") from None


def short(sha: str) -> str:
    return sha[:7]
