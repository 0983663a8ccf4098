"""One stored row re-graded with today's kit checks (pure, but for an optional live judge).

The row's run record (``response.metadata``: tool calls, transcript, the end-state snapshot,
the judge's verdicts) and its test's assertions are all a kit check reads, so each kit check
(:func:`agent_evals.assertions.registry.kit_checks`, the fast form included) is graded again
with :func:`agent_evals.provider.grading.grade_checks`, exactly as the provider grades a new
row. Its entry in ``gradingResult.componentResults`` and ``metadata.checks`` (with the grader
stamp) are replaced; every other assertion (Promptfoo's own, ``llm-rubric``, a NOT GRADED
placeholder) keeps its recorded result. The row's pass, score, reason and named scores are
then summed as Promptfoo sums them (weights, a test's ``threshold``). An error row stays an
error: nothing was graded.

Judged checks use the judge's recorded verdicts while they answer today's questions (the same
rubric hash); verdicts recorded for other wording are not served: the check is NOT GRADED,
unless a live judge re-judges the row (``judge`` given: :func:`rejudge`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent_evals.assertions._judged import NOT_GRADED
from agent_evals.assertions.registry import check_name, kit_checks
from agent_evals.suites.check_ref import CheckRef
from agent_evals.judging.questions import rubric_sha256
from agent_evals.provider.grading import grade_checks
from agent_evals.record import judgement_key

if TYPE_CHECKING:
    from agent_evals.packs.base import Pack


@dataclass(frozen=True)
class Regraded:
    row: dict[str, Any]
    checks: int  # kit checks graded again
    kept: int  # other assertions kept as recorded
    before: str  # pass / fail / error
    after: str


def outcome(row: Mapping[str, Any]) -> str:
    if row.get("failureReason") == 2:
        return "error"
    return "pass" if row.get("success") else "fail"


def regrade_row(row: Mapping[str, Any], pack: Pack | None = None) -> Regraded:
    """``row`` graded again with today's checks (a new dict; ``row`` is left as it was); ``pack``: the
    suite's, whose own checks are graded again too."""
    was = outcome(row)
    if was == "error":
        return Regraded(dict(row), 0, 0, was, was)
    new = _fresh(row)
    metadata = new["response"].get("metadata")
    test = new.get("testCase") or {}
    asserts = list(test.get("assert") or [])
    components = new["gradingResult"]["componentResults"]
    if not isinstance(metadata, dict):
        return Regraded(new, 0, len(components), was, was)
    _unserve_old_rubrics(metadata)
    listed = kit_checks(asserts, pack)
    checks = listed + _informative(metadata, listed, len(asserts))
    entries = grade_checks(checks, asserts, metadata, pack)
    metadata["checks"] = entries
    if isinstance(new.get("metadata"), dict) and "checks" in new["metadata"]:
        new["metadata"]["checks"] = entries
    not_graded: list[str] = []
    replaced = _replace_components(components, [e for e in entries if not e.get("informative")], not_graded, pack)
    if not_graded:
        row_meta = new.setdefault("metadata", {})
        row_meta["not_graded"] = list(dict.fromkeys([*(row_meta.get("not_graded") or []), *not_graded]))
    _sum(new, components, test.get("threshold"))
    return Regraded(new, replaced, len(components) - replaced, was, outcome(new))


def _fresh(row: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of what re-grading changes (the rest, transcripts and snapshots, is shared, not copied)."""
    new = dict(row)
    new["response"] = dict(new.get("response") or {})
    if isinstance(new["response"].get("metadata"), dict):
        metadata = new["response"]["metadata"] = dict(new["response"]["metadata"])
        if isinstance(metadata.get("judged"), list):
            metadata["judged"] = [dict(j) if isinstance(j, dict) else j for j in metadata["judged"]]
    if isinstance(new.get("metadata"), dict):
        new["metadata"] = dict(new["metadata"])
    grading = new["gradingResult"] = dict(new.get("gradingResult") or {})
    grading["componentResults"] = list(grading.get("componentResults") or [])
    return new


def _unserve_old_rubrics(metadata: dict[str, Any]) -> None:
    """Recorded verdicts that answer questions of another wording are not today's: not graded."""
    for judgement in metadata.get("judged") or []:
        if not isinstance(judgement, dict) or judgement.get("not_graded") is not None:
            continue
        today = rubric_sha256(str(judgement.get("check")))
        if judgement.get("rubric") != today:
            was = judgement.get("rubric") or "none recorded"
            judgement["not_graded"] = (
                f"the recorded verdicts answer other questions (rubric {was}, today {today}): regrade with a judge "
                "(agent-evals regrade --judge)"
            )
            judgement["verdicts"] = []


def _informative(metadata: Mapping[str, Any], checks: Sequence[CheckRef], position: int) -> list[CheckRef]:
    """The judged checks the provider adds (an informative goal_reached), as it adds them
    (:func:`agent_evals.provider.judged.informative_checks`): judged, and not in the test."""
    listed = {judgement_key(c.name, c.config) for c in checks}
    return [
        CheckRef(str(j["check"]), None, None, position, informative=True)
        for j in metadata.get("judged") or []
        if isinstance(j, dict) and j.get("informative") and j.get("not_graded") is None and j.get("key") not in listed
    ]


def _replace_components(
    components: list[dict[str, Any]], entries: Sequence[dict[str, Any]], not_graded: list[str], pack: Pack | None = None
) -> int:
    """Each kit check's component result replaced by its new grading; the count replaced. A check
    that is now NOT GRADED becomes the weight-0 entry the hook makes (listed in ``not_graded``)."""
    by_position = {entry["position"]: entry for entry in entries}
    replaced = 0
    for index, component in enumerate(components):
        assertion = component.get("assertion") if isinstance(component, dict) else None
        name = check_name(assertion, pack) if isinstance(assertion, dict) else None
        if not isinstance(assertion, dict) or name is None:
            continue
        entry = by_position.get(index)
        if entry is None or entry["name"] != name:
            entry = next((e for e in entries if e["name"] == name
                          and e.get("config") == assertion.get("config")), None)
        if entry is None:
            continue
        if str(entry["reason"]).startswith(NOT_GRADED):  # as the hook makes it: weight 0, never in a score
            components[index] = {**component, "pass": True, "score": 0.0, "reason": entry["reason"],
                                 "namedScores": {}, "assertion": {**assertion, "weight": 0}}
            not_graded.append(f"{entry['name']} ({entry.get('metric') or 'no metric'}): "
                              f"{str(entry['reason']).removeprefix(NOT_GRADED + ': ')}")
        else:
            components[index] = {**component, "pass": entry["pass"], "score": entry["score"],
                                  "reason": entry["reason"], "namedScores": entry["namedScores"]}
        replaced += 1
    return replaced


def _sum(row: dict[str, Any], components: list[dict[str, Any]], threshold: Any) -> None:
    """Pass, score, reason and named scores from the components, as Promptfoo's AssertionsResult sums them."""
    total = weight_sum = 0.0
    named: dict[str, float] = {}
    weights: dict[str, float] = {}
    failed = None
    for component in components:
        assertion = component.get("assertion") or {}
        weight = float(assertion.get("weight", 1) if isinstance(assertion.get("weight", 1), int | float) else 1)
        score = float(component.get("score") or 0)
        total, weight_sum = total + score * weight, weight_sum + weight
        metric = assertion.get("metric")
        if metric:
            named[metric] = named.get(metric, 0.0) + score * weight
            weights[metric] = weights.get(metric, 0.0) + weight
        for name, value in (component.get("namedScores") or {}).items():
            if name != metric and isinstance(value, int | float):
                named[name] = named.get(name, 0.0) + value * weight
                weights[name] = weights.get(name, 0.0) + weight
        if not component.get("pass"):
            failed = component.get("reason")
    score = total / weight_sum if weight_sum > 0 else 0.0
    passed = failed is None
    reason = failed or "All assertions passed"
    if isinstance(threshold, int | float) and not isinstance(threshold, bool):
        passed = score >= threshold
        reason = f"Aggregate score {score:.2f} {'≥' if passed else '<'} {threshold} threshold"
    scores = {name: (value / weights[name] if weights[name] > 0 else 0.0) for name, value in named.items()}
    grading = row.get("gradingResult") or {}
    grading.update({"pass": passed, "score": score, "reason": reason, "namedScores": scores,
                    "namedScoreWeights": weights, "componentResults": components})
    row.update(gradingResult=grading, success=passed, score=score, namedScores=scores,
               failureReason=0 if passed else 1, error=None if passed else reason)
