"""The run record's versions, and the one upgrade of an older record (standard library only).

==========  ===============================================================================
version     what changed
==========  ===============================================================================
2           the record as one type (tool calls with typed outcomes, ``pull_requests`` as
            ``[{id, url}]``, error kind ``portal`` for the system under test's failures)
3           ``side_effects`` (``[{kind, id, url?}]``, a pull request is kind
            ``pull_request``) replace ``pull_requests``; error kind ``portal`` is ``system``;
            the snapshot is ``{read_from, resources}`` (``portal_url`` is ``read_from``, the
            portal's pull requests are the resource ``pull_requests``)
==========  ===============================================================================

A version-2 record is read as its upgrade (:func:`upgrade_record`): ``RunRecord.from_metadata``
applies it in memory, so old Promptfoo rows report and regrade and stored production
conversations score; ``agent-evals cassettes upgrade DIR`` writes it into the cassettes (v2 to v3
changes no model input: their fingerprints stay). Any other version is refused with
:func:`unsupported`.
"""

from __future__ import annotations

import copy
import marshal
from collections.abc import Mapping
from typing import Any, Final

RECORD_VERSION: Final = 3
MARKER: Final = "agent_evals"  # metadata key holding the record version; tells our metadata from another provider's
UPGRADABLE: Final = (2,)  # older versions read as their upgrade
UPGRADE_HINT: Final = (
    "re-run the case, or upgrade cassettes with `npx agent-evals cassettes upgrade DIR`"
)

#: error kinds an older record names that this version calls otherwise
RENAMED_ERROR_KINDS: Final[Mapping[str, str]] = {"portal": "system"}


def unsupported(version: Any) -> str:
    """The one line for a record of a version this kit cannot read."""
    return (
        f"run record version {version!r} is not supported (this kit reads versions "
        f"{', '.join(map(str, (*UPGRADABLE, RECORD_VERSION)))}); {UPGRADE_HINT}"
    )


def upgrade_record(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A version-2 record (a row's metadata, a cassette's ``record``) as version 3; a version-3 record
    is returned as a copy. Pure: ``metadata`` is not changed. Keys it does not name are kept as they
    are (the reader checks them).

    Raises ``ValueError`` naming the problem: any other version (:func:`unsupported`), a version-2
    ``pull_requests`` entry without a numeric id, a version-2 snapshot without a ``portal_url``."""
    version = metadata.get(MARKER)
    out = _copy(dict(metadata))
    if version == RECORD_VERSION:
        return out
    if version not in UPGRADABLE or isinstance(version, bool):
        raise ValueError(unsupported(version))
    out = {("side_effects" if key == "pull_requests" else key): value for key, value in out.items()}  # in place
    out[MARKER] = RECORD_VERSION
    if "side_effects" in out and "pull_requests" in metadata:
        out["side_effects"] = _side_effects(out["side_effects"])
    kind = out.get("error_kind")
    if isinstance(kind, str):
        out["error_kind"] = RENAMED_ERROR_KINDS.get(kind, kind)
    if out.get("snapshot") is not None:
        out["snapshot"] = _snapshot(out["snapshot"])
    return out


def _copy(value: dict[str, Any]) -> dict[str, Any]:
    """An independent copy: marshal's round trip for JSON-shaped data (what a record is; 4× faster
    than ``copy.deepcopy``, which every check's read of a record paid), ``deepcopy`` for anything else."""
    try:
        return marshal.loads(marshal.dumps(value))
    except ValueError:  # an object marshal does not know (a subclass of dict, say)
        return copy.deepcopy(value)


def _snapshot(old: Any) -> Any:
    """A version-2 snapshot ``{portal_url, pull_requests, resources}`` as ``{read_from, resources}``: its
    pull requests (the portal's records; empty for a pack without a portal) become the resource
    ``pull_requests``, where the pack that reads them keeps them now."""
    if not isinstance(old, Mapping) or not isinstance(old.get("portal_url"), str):
        raise ValueError("metadata 'snapshot' of a version-2 record must be an object with a 'portal_url'")
    resources = old.get("resources") or {}
    if not isinstance(resources, Mapping):
        raise ValueError("metadata 'snapshot.resources' must be an object")
    if "pull_requests" in old and "pull_requests" in resources:
        raise ValueError("metadata 'snapshot' of a version-2 record has both 'pull_requests' and a resource "
                         "'pull_requests'; version 3 keeps the pull requests in that resource")
    moved = {"pull_requests": old["pull_requests"] or []} if "pull_requests" in old else {}
    rest = {k: v for k, v in old.items() if k not in ("portal_url", "pull_requests", "resources")}
    return {"read_from": old["portal_url"], "resources": {**resources, **moved}, **rest}


def _side_effects(pull_requests: Any) -> Any:
    if not isinstance(pull_requests, list):
        return pull_requests  # the reader names it
    return [_side_effect(pr) for pr in pull_requests]


def _side_effect(pr: Any) -> dict[str, str]:
    pr_id = pr.get("id") if isinstance(pr, Mapping) else None
    if isinstance(pr_id, bool) or not isinstance(pr_id, int):
        raise ValueError(f"metadata 'pull_requests' entries must be {{id, url}}, got {pr!r:.80}")
    out = {"kind": "pull_request", "id": str(pr_id)}
    if pr.get("url"):
        out["url"] = str(pr["url"])
    return out


__all__ = ["MARKER", "RECORD_VERSION", "RENAMED_ERROR_KINDS", "UPGRADABLE", "unsupported", "upgrade_record"]
