"""What an eval's shard stamp says (pure): a shard's results file (``agent-evals/shard@1``, from
``agent-evals run --shard``) or a merged eval (``agent-evals/merged@1``, from ``agent-evals merge``,
kept in its config's ``metadata.agentEvals``, so also in the viewer's database).

:func:`stamp_fields` gives the :class:`~agent_evals.report.model.EvalInfo` fields it sets: the
suite, the selected cases (a shard's own; a merged eval's whole selection), the repeat count,
which shards the eval holds and which the plan expects; :func:`missing_shards` finds the
shards of a sharded run that none of the evals read holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_evals.report.model import EvalInfo

SHARD = "agent-evals/shard@1"
MERGED = "agent-evals/merged@1"
KEY = "agentEvals"


def stamp_of(document: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The stamp of a results document: its top-level ``agentEvals``, else its config's."""
    found = document.get(KEY)
    if not isinstance(found, Mapping):
        config = document.get("config")
        metadata = config.get("metadata") if isinstance(config, Mapping) else None
        found = metadata.get(KEY) if isinstance(metadata, Mapping) else None
    return found if isinstance(found, Mapping) and found.get("format") in (SHARD, MERGED) else None


def stamp_fields(stamp: Mapping[str, Any] | None) -> dict[str, Any]:
    """The EvalInfo fields a stamp sets ({} for none, or one the report cannot read)."""
    if stamp is None:
        return {}
    try:
        selected = [str(case[0]) for case in stamp["selected"]]
        plan = [list(positions) for positions in stamp["plan"]]
        fields: dict[str, Any] = {
            "suite": str(stamp["suite"]),
            "mode": str(stamp["mode"]),
            "repeat": int(stamp["repeat"]),
            "providers": int(stamp["providers"]),
            "shard_count": int(stamp["of"]),
            "shards_planned": tuple(n for n, positions in enumerate(plan, start=1) if positions),
            "shard_run": str(stamp["fingerprint"]),
            "git_revision": str(stamp["git_revision"]) if stamp.get("git_revision") else None,
        }
        if stamp["format"] == SHARD:
            index = int(stamp["shard"])
            fields["shards"] = (index,)
            fields["selected"] = tuple(selected[p] for p in plan[index - 1])
            fields["run_id"] = str(stamp["run_id"])
        else:
            fields["shards"] = tuple(int(n) for n in stamp["shards"])
            fields["selected"] = tuple(selected)
    except (KeyError, TypeError, ValueError, IndexError):
        return {}
    return fields


def missing_shards(evals: Sequence[EvalInfo]) -> list[str]:
    """One line per sharded run whose planned shards are not all among ``evals``."""
    runs: dict[str, list[EvalInfo]] = {}
    for info in evals:
        if info.shard_run is not None:
            runs.setdefault(info.shard_run, []).append(info)
    reasons = []
    for members in runs.values():
        held = {n for info in members for n in info.shards or ()}
        planned = next((info.shards_planned for info in members if info.shards_planned is not None), ())
        missing = [n for n in planned or () if n not in held]
        if missing:
            total = members[0].shard_count
            names = ", ".join(f"{n}/{total}" for n in missing)
            reasons.append(
                f"suite {members[0].suite}: shard(s) {names} missing (no results of them were merged or read)"
            )
    return reasons
