"""Synthetic Promptfoo rows graded by the kit's own checks, as a suite run stores them: the
test's assertions in the hook's fast form (``assertions/kit.js:<check>``), the provider's
``metadata.checks`` (with each grader stamp), and the component results, pass and score
Promptfoo derives from them. For tests and benchmarks of ``agent-evals regrade`` and of
grader versions::

    row = kit_row("C01", 0, [("tool_sequence", {"expected": ["get_item"]}, "tool_sequence")])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_evals.testing.promptfoo_results import result_row
from agent_evals.assertions.registry import kit_checks
from agent_evals.provider.grading import grade_checks

KIT_JS = "file:///project/assertions/kit.js"

Check = tuple[str, Any, str]  # (check name, its config, its metric)


def kit_row(
    case_id: str,
    test_idx: int,
    checks: Sequence[Check],
    *,
    tool_calls: Sequence[tuple[str, Mapping[str, Any]]] = (("get_item", {"id": 1}), ("open_ticket", {"queue": "billing"})),
    judged: Sequence[Mapping[str, Any]] = (),
    **kwargs: Any,
) -> dict[str, Any]:
    """One row whose kit checks were graded by the checks as they are now."""
    row = result_row(case_id, test_idx, "pass", passing=(), tool_calls=[name for name, _ in tool_calls], **kwargs)
    metadata = row["response"]["metadata"]
    for call, (_, arguments) in zip(metadata["tool_calls"], tool_calls, strict=True):
        call["arguments"] = dict(arguments)
    if judged:
        metadata["judged"] = [dict(j) for j in judged]
    asserts = [{"type": "javascript", "value": f"{KIT_JS}:{name}", "config": config, "metric": metric}
               for name, config, metric in checks]
    row["testCase"]["assert"] = asserts
    entries = grade_checks(kit_checks(asserts), asserts, metadata)
    metadata["checks"] = entries
    components = [{"pass": e["pass"], "score": e["score"], "reason": e["reason"], "namedScores": e["namedScores"],
                   "assertion": asserts[e["position"]]} for e in entries]
    passed = all(e["pass"] for e in entries)
    scores = {metric: e["score"] for (_, _, metric), e in zip(checks, entries, strict=True)}
    failed = next((e["reason"] for e in reversed(entries) if not e["pass"]), None)
    row["gradingResult"].update({"pass": passed, "score": sum(e["score"] for e in entries) / max(1, len(entries)),
                                 "reason": failed or "All assertions passed", "componentResults": components,
                                 "namedScores": scores, "namedScoreWeights": {m: 1 for m in scores}})
    row.update(success=passed, score=row["gradingResult"]["score"], namedScores=scores, failureReason=0 if passed else 1)
    if not passed:
        row["error"] = failed
    row["metadata"]["checks"] = entries
    return row
