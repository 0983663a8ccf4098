"""The kit's checks of a row, graded once in the provider's worker (no process per check).

After the conversation and the end-state snapshot, :func:`grade_checks` runs every kit check
of the test (``type: python`` on ``assertions/<check>.py``) with the check's own ``grade`` on
the row's metadata — exactly what ``assertions/<check>.py`` does in a process of its own — and
the results go into ``metadata.checks``. The suites' hook (``hooks/kit.js``) points each of
those assertions at ``assertions/kit.js``, which answers from there, so the viewer still shows
one entry per check with its metric, score and reason. A check that raises fails with the
exception's message; the others still report.

A check that could not be graded (a judged check the judge did not answer) says ``NOT GRADED``
and carries ``not_graded: true``; it never passes a deciding entry, so its row is *incomplete*
(neither a pass nor a fail: the report leaves it out of pass^k) unless another check failed it.
A weight-0 entry of the test never fails the row (Promptfoo fails a row on any failing entry,
whatever its weight). A check the provider added (``informative: true``, goal_reached on a case
that lists none) is no entry of the row at all: its result keeps its own verdict and becomes a
named score (``hooks/kit.js``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agent_evals.assertions._judged import NOT_GRADED
from agent_evals.assertions._run import reading_once
from agent_evals.assertions.grader_version import grader_stamp
from agent_evals.assertions.registry import check_module
from agent_evals.suites.check_ref import CheckRef

if TYPE_CHECKING:
    from agent_evals.packs.base import Pack

log = logging.getLogger(__name__)


def grade_checks(
    checks: Sequence[CheckRef], asserts: Sequence[Mapping[str, Any]], metadata: Mapping[str, Any],
    pack: Pack | None = None,
) -> list[dict[str, Any]]:
    """One result per kit check: ``{name, metric, config, position, pass, score, reason, namedScores,
    grader}`` (``pack``: the suite's, whose own checks are graded too; ``grader``: which version of the check gave it: :mod:`agent_evals.assertions.grader_version`)
    (``informative: true`` on a check the provider added, which the test does not list)."""
    out = []
    with reading_once():  # the record is read from the metadata once, not once per check
        results = [_grade_one(check, metadata, pack) for check in checks]
    for check, result in zip(checks, results, strict=True):
        listed = not check.informative and check.position < len(asserts)
        threshold = asserts[check.position].get("threshold") if listed else None
        if isinstance(threshold, int | float) and not isinstance(threshold, bool) and result["score"] < threshold:
            result["pass"] = False  # as Promptfoo applies an assertion's threshold to a Python result
        if listed and asserts[check.position].get("weight") == 0:
            result["pass"] = True  # a weight-0 entry of the test: reported, never deciding the row
        entry = {
            "name": check.name, "metric": check.metric, "config": check.config, "position": check.position,
            "pass": bool(result["pass"]), "score": float(result["score"]), "reason": str(result["reason"]),
            "namedScores": dict(result.get("namedScores") or {}),
            "grader": grader_stamp(check.name, check.config, metadata, pack),
        }
        if check.informative:
            entry["informative"] = True
        if check.negated:
            entry["negated"] = True
        if entry["reason"].startswith(NOT_GRADED):
            entry["not_graded"] = True
        out.append(entry)
    return out


def _grade_one(check: CheckRef, metadata: Mapping[str, Any], pack: Pack | None) -> dict[str, Any]:
    try:
        grade = check_module(check.name, pack).grade
        return dict(grade(check.config, metadata, negated=True) if check.negated else grade(check.config, metadata))
    except Exception as exc:  # noqa: BLE001 - this check fails with its reason; the others still report
        log.warning("check %s raised", check.name, exc_info=True)
        return {"pass": False, "score": 0.0, "reason": f"{check.name}: the check raised {type(exc).__name__}: {exc}"}
