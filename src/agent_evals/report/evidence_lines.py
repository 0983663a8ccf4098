"""The evidence of a baseline comparison as lines and as JSON (pure), for every format.

Per tier, the cases with their graded runs on each side, the one-sided p-value and the 95%
interval of the change of pass rate; then the groups; then the cases whose baseline is too
thin to show anything.
"""

from __future__ import annotations

from typing import Any

from agent_evals.report.evidence import TIERS, CaseEvidence, Evidence, EvidenceReport, GroupEvidence

TITLES = {
    "regression": "regression",
    "likely_regression": "likely regression",
    "improvement": "improvement",
    "no_evidence": "no evidence either way",
}
MAX_LISTED = 8


def evidence_head(report: EvidenceReport) -> str:
    family = report.worse_family
    return (
        f"evidence (exact one-sided tests; regression at α {report.alpha:g} family-wise: p ≤ {family.threshold:.3g} "
        f"over {family.testable} case(s) that could reach it; likely at p ≤ {report.likely:g} for a case alone):"
    )


def evidence_lines(report: EvidenceReport, code: str = "") -> list[str]:
    """One line per tier with cases (no evidence as a count), the groups that moved, thin baselines."""
    out = []
    for tier in TIERS:
        cases = report.of(tier)
        if not cases:
            continue
        if tier == "no_evidence":
            out.append(f"{TITLES[tier]}: {len(cases)} case(s)")
            continue
        shown = [f"{code}{c.id}{code} {describe(c.evidence)}" for c in cases[:MAX_LISTED]]
        more = f"; and {len(cases) - MAX_LISTED} more" if len(cases) > MAX_LISTED else ""
        out.append(f"{TITLES[tier]} ({len(cases)}): " + "; ".join(shown) + more)
    moved = [g for g in report.groups if g.evidence.tier != "no_evidence"]
    if moved:
        out.append("groups: " + "; ".join(f"{_group_name(g)} {TITLES[g.evidence.tier]}, {describe(g.evidence)}"
                                          for g in moved))
    thin = report.unreliable
    if thin:
        ids = ", ".join(f"{c.id} {c.evidence.runs_before}" for c in thin[:MAX_LISTED])
        out.append(
            f"unreliable baseline: {len(thin)} case(s) with fewer than {report.min_runs} graded runs ({ids}"
            + (", …" if len(thin) > MAX_LISTED else "") + "): no regression can be shown against them"
        )
    return out


def describe(evidence: Evidence) -> str:
    """``5/5 → 0/5, p=0.004, change -1.00 [-1.00, -0.43]``."""
    if evidence.worse is None:
        return evidence.note or "no graded run"
    p = evidence.better if evidence.tier == "improvement" else evidence.worse
    text = f"{evidence.rates}, p={p:.3g}"
    if evidence.interval is not None:
        change = evidence.passed_after / evidence.runs_after - evidence.passed_before / evidence.runs_before
        text += f", change {change:+.2f} [{evidence.interval[0]:+.2f}, {evidence.interval[1]:+.2f}]"
    return text


def _group_name(group: GroupEvidence) -> str:
    return "all cases" if group.kind == "all" else f"{group.kind} {group.name}"


def evidence_to_json(report: EvidenceReport) -> dict[str, Any]:
    return {
        "alpha": report.alpha,
        "likely": report.likely,
        "min_runs": report.min_runs,
        "family": {"testable": report.worse_family.testable, "threshold": report.worse_family.threshold},
        "counts": {tier: len(report.of(tier)) for tier in TIERS},
        "cases": [_case(c) for c in report.cases],
        "groups": [{"kind": g.kind, "name": g.name, "cases": g.cases, **_evidence(g.evidence)} for g in report.groups],
    }


def _case(case: CaseEvidence) -> dict[str, Any]:
    return {"id": case.id, "provider": case.provider, "priority": case.priority, "group": case.group,
            **_evidence(case.evidence), "unreliable": case.unreliable}


def _evidence(evidence: Evidence) -> dict[str, Any]:
    out = dict(vars(evidence))
    out["interval"] = list(evidence.interval) if evidence.interval is not None else None
    return out
