"""What the judged checks share: finding the judge's verdicts in the metadata, and NOT GRADED.

The provider asks the judge and keeps its verdicts in the run record's ``judged`` list
(:mod:`agent_evals.record.judgement`); a judged check's ``grade`` reads them there, by the
check's key (its name and config), like every other check reads the metadata. A check the
judge did not answer is NOT GRADED: its result says so and never passes. (In a suite run
the hook ``hooks/kit.js`` takes such a check out of the row's assertions before the row runs,
so it counts in no score and no pass count; this result is what is left when that did not happen.)
"""

from __future__ import annotations

from typing import Any

from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.assertions._run import read_record
from agent_evals.record import Judgement, judgement_key

from agent_evals.assertions._context import NOT_GRADED  # noqa: E402 - one spelling for the kit

__all__ = ["NOT_GRADED", "judged", "judged_by", "not_graded"]


def judged(name: str, config: Any, metadata: Any) -> Judgement | GradingResult:
    """The judge's verdicts on this check, or the NOT GRADED result saying why there are none."""
    record = read_record(metadata)
    key = judgement_key(name, config)
    found = next((j for j in record.judged if j.key == key), None)
    if found is None:
        return not_graded(name, "the provider did not judge this check (no entry for it in the metadata's 'judged' list)")
    if found.not_graded is not None:
        return not_graded(name, found.not_graded, informative=found.informative)
    if not found.verdicts:
        return not_graded(name, "the judge gave no verdict", informative=found.informative)
    return found


def not_graded(name: str, why: str, *, informative: bool = False) -> GradingResult:
    """Never a pass: a check the judge did not answer tells so and scores nothing. A deciding check fails
    its entry (the row is then incomplete, never passed: the report reads its ``NOT GRADED`` reason); an
    informative one is no entry of the row, so it fails nothing (``informative`` is kept for the callers)."""
    reason = f"{NOT_GRADED}: {name}: {why}; this check did not run and counts neither as a pass nor in any score"
    return make_result(False, reason, score=0.0)


def judged_by(judgement: Judgement) -> str:
    return f" (judge: {judgement.model})" if judgement.model else ""
