"""The run record's pull requests: the side effects of kind ``pull_request``, and the portal's records of
them in the end-state snapshot (standard library only: the checks import it).

The portal's pull requests are the spoke pack's side effects: :meth:`PortalSystem.side_effect` and the
end-state snapshot add them to the record (:func:`pull_request`); the checks, the undo and the
snapshot read them back with their numbers (:func:`created_pull_requests`). The snapshot
(:mod:`.snapshot`) keeps what the portal said of each (status, validation, diff, …) in its resource
``pull_requests`` (:data:`PULL_REQUESTS_RESOURCE`); the checks read it with :func:`snapshot_pull_request`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from agent_evals.authoring import RecordError, RunRecord, SideEffect, Snapshot

PULL_REQUEST: Final = "pull_request"  # the side effect kind of a portal pull request
PULL_REQUESTS_RESOURCE: Final = "pull_requests"  # the snapshot resource holding the portal's records of them


@dataclass(frozen=True)
class PullRequestRef:
    """A pull request the conversation created: its number on the portal and its link."""

    id: int
    url: str = ""


def pull_request(pr_id: int, url: str = "") -> SideEffect:
    """The record's side effect for the portal's pull request ``pr_id``."""
    return SideEffect(PULL_REQUEST, str(pr_id), url)


def created_pull_requests(record: RunRecord) -> list[PullRequestRef]:
    """The pull requests the record's side effects name, in order (an id that is not a number is not
    the portal's: left out)."""
    return [PullRequestRef(int(s.id), s.url) for s in record.side_effects_of(PULL_REQUEST) if _is_number(s.id)]


def pull_request_ids(metadata: Mapping[str, Any]) -> list[int]:
    """The pull request ids a row's metadata names, read leniently (a damaged record still gets its PRs
    cleaned up): the ``side_effects`` of kind ``pull_request``, and a version-2 record's ``pull_requests``."""
    ids: list[int] = []
    for entry in metadata.get("side_effects") or ():
        if isinstance(entry, Mapping) and entry.get("kind") == PULL_REQUEST and _is_number(entry.get("id")):
            ids.append(int(entry["id"]))
    for entry in metadata.get("pull_requests") or ():
        if isinstance(entry, Mapping) and isinstance(entry.get("id"), int) and not isinstance(entry.get("id"), bool):
            ids.append(entry["id"])
    return ids


def snapshot_pull_requests(snapshot: Snapshot) -> list[Mapping[str, Any]]:
    """The portal's records (``id, url, status, validation_status, diff, …``) of the pull requests the
    conversation created or linked, as the end-state snapshot holds them. Raises :class:`RecordError`
    when the snapshot has no such resource (the spoke pack's snapshot always writes it) or a bad one."""
    found = snapshot.resources.get(PULL_REQUESTS_RESOURCE)
    if found is None:
        raise RecordError(
            f"the end-state snapshot has no resource {PULL_REQUESTS_RESOURCE!r} (the spoke pack's snapshot "
            "reads the portal's pull requests into it; resources found: "
            f"{', '.join(sorted(snapshot.resources)) or 'none'}): was this row run with another pack?"
        )
    if not isinstance(found, list) or not all(isinstance(pr, Mapping) for pr in found):
        raise RecordError(
            f"metadata 'snapshot.resources.{PULL_REQUESTS_RESOURCE}' must be a list of pull request objects"
        )
    return found


def snapshot_pull_request(snapshot: Snapshot, pr_id: int) -> Mapping[str, Any] | None:
    """The portal's record of pull request ``pr_id`` in the end-state snapshot, or None when the portal did
    not have it (raises :class:`RecordError` like :func:`snapshot_pull_requests`)."""
    return next((pr for pr in snapshot_pull_requests(snapshot) if pr.get("id") == pr_id), None)


def _is_number(text: Any) -> bool:
    return isinstance(text, str) and text.isascii() and text.isdigit()


__all__ = [
    "PULL_REQUEST",
    "PULL_REQUESTS_RESOURCE",
    "PullRequestRef",
    "created_pull_requests",
    "pull_request",
    "pull_request_ids",
    "snapshot_pull_request",
    "snapshot_pull_requests",
]
