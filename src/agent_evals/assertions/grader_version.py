"""Which grader gave a verdict: the check's version, its config's hash, and for a judged check
the judge model and the hash of the questions it answered (standard library only).

Every kit check module declares ``VERSION`` (an integer, bumped when a verdict of an existing
config can change; ``tests/assertions/test_grader_versions.py`` fails when a check's code
changes and asks whether to bump it). The provider records :func:`grader_stamp` with each
verdict (``metadata.checks[*].grader``); the report and the gate refuse to compare runs whose
graders differ unless asked (``--across-grader-versions``), and ``agent-evals regrade``
re-grades a stored eval with today's checks.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agent_evals.assertions.registry import check_module
from agent_evals.record import judgement_key

if TYPE_CHECKING:
    from agent_evals.packs.base import Pack


def check_version(name: str, pack: Pack | None = None) -> int:
    """The ``VERSION`` of a kit check (``pack``: the suite's; raises ``KitCheckError``, a KeyError, for an
    unknown check)."""
    version = getattr(check_module(name, pack), "VERSION", None)
    if not isinstance(version, int) or isinstance(version, bool):
        raise TypeError(f"the kit check {name} declares no integer VERSION")
    return version


def config_sha256(config: Any) -> str:
    """12 hex digits of the config's canonical JSON (no config is the same as an empty one)."""
    canonical = json.dumps(config or {}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def grader_stamp(name: str, config: Any, metadata: Mapping[str, Any], pack: Pack | None = None) -> dict[str, Any]:
    """``{check, version, config}``, and for a judged check ``judge_model`` and ``rubric`` (the
    judgement the row's record holds for it; empty when it was not judged)."""
    stamp: dict[str, Any] = {"check": name, "version": check_version(name, pack), "config": config_sha256(config)}
    judged = metadata.get("judged") if isinstance(metadata, Mapping) else None
    if isinstance(judged, list) and judged:
        key = judgement_key(name, config)
        found = next((j for j in judged if isinstance(j, Mapping) and j.get("key") == key), None)
        if found is not None:
            stamp["judge_model"] = str(found.get("model") or "")
            stamp["rubric"] = str(found.get("rubric") or "")
    return stamp
