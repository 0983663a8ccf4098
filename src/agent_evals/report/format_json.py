"""The report's JSON form (``--format json``), a stable contract: ``agent-evals/report@1``.

Every key is described in ``docs/report.md``. :func:`report_to_json` writes it;
:func:`report_from_json` reads it back, so a stored report serves as a baseline
(``--baseline baseline.json``). Keys are only ever added within one format version.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_evals.record import END_REASONS, ROLES, AgentInfo, Role, Usage
from agent_evals.report.compare import CHANGE_KINDS, Comparison
from agent_evals.report.errors import ReportInputError
from agent_evals.report.evidence_lines import evidence_to_json
from agent_evals.report.rows import Grader
from agent_evals.report.model import (
    Blessing,
    BudgetSummary,
    CaseSummary,
    EvalInfo,
    GroupSummary,
    InvalidRun,
    LedgerSummary,
    MetricSummary,
    Pattern,
    PatternKind,
    Report,
    RunFailure,
    RunInfo,
    RunLabel,
    SimulatorQuality,
)

FORMAT = "agent-evals/report@1"
_BY: dict[PatternKind, str] = {"metric": "by_metric", "tool": "by_tool", "path": "by_path"}


def report_to_json(report: Report, comparison: Comparison | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "format": FORMAT,
        "complete": report.complete,
        "incomplete": list(report.incomplete),
        "k": report.k,
        "ran": label_to_json(report.label),
        "evals": [dict(vars(info), selected=_list(info.selected)) for info in report.evals],
        "runs": [dict(vars(run), suites_not_run=list(run.suites_not_run)) for run in report.runs],
        "totals": _group(report.totals),
        "cases": [_case(case) for case in report.cases],
        "groups": [_group(group) for group in report.groups],
        "priorities": [_group(group) for group in report.priorities],
        "metrics": [dict(vars(metric)) for metric in report.metrics],
        "failure_analysis": {
            key: [_pattern(p) for p in report.patterns if p.kind == kind] for kind, key in _BY.items()
        },
        "errors_by_kind": dict(report.errors_by_kind),
        "not_graded": report.totals.not_graded,
        "usage": _usage(report.usage),
        "cost": report.cost,
        "notes": list(report.notes),
        "budget": _budget(report),
        "invalid_runs": [dict(vars(run)) for run in report.invalid_runs],
        "simulator_quality": [_quality(q) for q in report.simulator],
        "fixed_user_rows": report.fixed_user_rows,
    }
    if report.blessed is not None:
        out["blessed"] = _plain(vars(report.blessed))
    if comparison is not None:
        out["baseline"] = comparison_to_json(comparison)
    return out


def comparison_to_json(comparison: Comparison) -> dict[str, Any]:
    blessed = comparison.baseline_blessed
    return {
        "ran": label_to_json(comparison.baseline),
        "matched_by": comparison.matched_by,
        "counts": {kind: len(comparison.of(kind)) for kind in CHANGE_KINDS},
        "cases": [dict(vars(case)) for case in comparison.cases],
        "metrics": [dict(vars(metric)) for metric in comparison.metrics],
        "evidence": evidence_to_json(comparison.evidence) if comparison.evidence is not None else None,
        "blessed": _plain(vars(blessed)) if blessed is not None else None,
        "grader_changes": [_plain(vars(change)) for change in comparison.grader_changes],
    }


def _plain(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, tuple) else value for key, value in fields.items()}


def label_to_json(label: RunLabel) -> dict[str, Any]:
    return {
        "agents": [{"provider": provider, **agent.to_dict()} for provider, agent in label.agents],
        "modes": list(label.modes),
        "git_revisions": list(label.git_revisions),
        "eval_ids": list(label.eval_ids),
    }


def _case(case: CaseSummary) -> dict[str, Any]:
    return {
        "id": case.id,
        "group": case.group,
        "priority": case.priority,
        "provider": case.provider,
        "suite": case.suite,
        "runs": case.runs,
        "passed": case.passed,
        "failed": case.failed,
        "errors": case.errors,
        "pass_hat_k": case.pass_hat_k,
        "k": case.k,
        "pass_rate": case.pass_rate,
        "flaky": case.flaky,
        "verdict": case.verdict,
        "ends": _ends(case.ends),
        "error_kinds": dict(case.error_kinds),
        "mean_turns": case.mean_turns,
        "mean_tool_calls": case.mean_tool_calls,
        "mean_latency_ms": case.mean_latency_ms,
        "usage": _usage(case.usage),
        "cost": round(sum(u.cost for u in case.usage.values()), 8),
        "not_graded": case.not_graded,
        "not_graded_deciding": case.not_graded_deciding,
        "graders": [dict(grader._asdict()) for grader in case.graders],
        "first_failure": case.first_failure,
        "failures": [dict(vars(f)) for f in case.failures],
        "first_error": case.first_error,
        "id_source": case.id_source,
        "invalid": case.invalid,
        "incomplete": case.incomplete,
        "attempts": case.attempts,
    }


def _group(group: GroupSummary) -> dict[str, Any]:
    return {
        "name": group.name,
        "cases": group.cases,
        "runs": group.runs,
        "passed": group.passed,
        "failed": group.failed,
        "errors": group.errors,
        "flaky": group.flaky,
        "pass_hat_k": group.pass_hat_k,
        "pass_rate": group.pass_rate,
        "ends": _ends(group.ends),
        "mean_turns": group.mean_turns,
        "mean_tool_calls": group.mean_tool_calls,
        "usage": _usage(group.usage),
        "cost": round(sum(u.cost for u in group.usage.values()), 8),
        "not_graded": group.not_graded,
        "case_ids": list(group.case_ids),
        "invalid": group.invalid,
        "incomplete": group.incomplete,
    }


def _budget(report: Report) -> dict[str, Any] | None:
    budget = report.budget
    if budget is None:
        return None
    return {
        "ledgers": [dict(vars(ledger), cost_by_role=dict(ledger.cost_by_role)) for ledger in budget.ledgers],
        "stopped_cases": list(budget.stopped_cases),
        "stopped_runs": budget.stopped_runs,
    }


def _quality(quality: SimulatorQuality) -> dict[str, Any]:
    return {**dict(vars(quality)), "by_check": dict(quality.by_check), "share": quality.share}


def _read_budget(raw: Any) -> BudgetSummary | None:
    if not isinstance(raw, Mapping):
        return None
    return BudgetSummary(
        tuple(LedgerSummary(**ledger) for ledger in raw["ledgers"]), tuple(raw["stopped_cases"]), int(raw["stopped_runs"])
    )


def _pattern(pattern: Pattern) -> dict[str, Any]:
    out: dict[str, Any] = {"name": pattern.name, "cases": list(pattern.cases), "runs": pattern.runs}
    if pattern.kind != "metric":
        out["metrics"] = list(pattern.metrics)
    return out


def _ends(ends: Mapping[str, int]) -> dict[str, int]:
    return {**{reason: 0 for reason in END_REASONS}, **ends}


def _usage(usage: Mapping[Role, Usage]) -> dict[str, Any]:
    return {role: usage.get(role, Usage()).as_dict() for role in ROLES}


def _list(value: tuple[str, ...] | None) -> list[str] | None:
    return list(value) if value is not None else None


# --- reading it back ---------------------------------------------------------------


def is_report_json(data: Any) -> bool:
    return isinstance(data, Mapping) and data.get("format") == FORMAT


def report_from_json(data: Mapping[str, Any], source: str) -> Report:
    """A :class:`Report` from its JSON form, or a one-line :class:`ReportInputError`."""
    try:
        return _report(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReportInputError(
            f"{source}: a malformed {FORMAT} report ({type(exc).__name__}: {exc})"
        ) from None


def _report(data: Mapping[str, Any]) -> Report:
    patterns = [
        Pattern(kind, p["name"], tuple(p["cases"]), int(p["runs"]), tuple(p.get("metrics", ())))
        for kind, key in _BY.items()
        for p in data["failure_analysis"][key]
    ]
    return Report(
        complete=bool(data["complete"]),
        incomplete=tuple(data["incomplete"]),
        k=data["k"],
        cases=tuple(_read_case(c) for c in data["cases"]),
        groups=tuple(_read_group(g) for g in data["groups"]),
        priorities=tuple(_read_group(g) for g in data["priorities"]),
        totals=_read_group(data["totals"]),
        metrics=tuple(MetricSummary(**m) for m in data["metrics"]),
        patterns=tuple(patterns),
        errors_by_kind=dict(data["errors_by_kind"]),
        usage=_read_usage(data["usage"]),
        evals=tuple(EvalInfo(**_eval_fields(e)) for e in data["evals"]),
        runs=tuple(RunInfo(**dict(r, suites_not_run=tuple(r["suites_not_run"]))) for r in data["runs"]),
        label=label_from_json(data["ran"]),
        notes=tuple(data["notes"]),
        budget=_read_budget(data.get("budget")),
        blessed=_read_blessing(data.get("blessed")),
        invalid_runs=tuple(InvalidRun(**run) for run in data.get("invalid_runs") or ()),
        simulator=tuple(
            SimulatorQuality(**{k: v for k, v in q.items() if k != "share"}) for q in data.get("simulator_quality") or ()
        ),
        fixed_user_rows=int(data.get("fixed_user_rows") or 0),
    )


def _read_blessing(raw: Any) -> Blessing | None:
    if not isinstance(raw, Mapping):
        return None
    fields: dict[str, Any] = {key: tuple(value) if isinstance(value, list) else value for key, value in raw.items()}
    return Blessing(**fields)


def label_from_json(raw: Mapping[str, Any]) -> RunLabel:
    return RunLabel(
        agents=tuple((a["provider"], AgentInfo.from_dict(a)) for a in raw["agents"]),
        modes=tuple(raw["modes"]),
        git_revisions=tuple(raw["git_revisions"]),
        eval_ids=tuple(raw["eval_ids"]),
    )


def _read_case(raw: Mapping[str, Any]) -> CaseSummary:
    fields = {k: v for k, v in raw.items() if k not in ("cost", "failures", "usage", "ends", "graders")}
    return CaseSummary(
        **fields,
        graders=tuple(Grader(**g) for g in raw.get("graders") or ()),
        ends=_read_ends(raw["ends"]),
        usage=_read_usage(raw["usage"]),
        failures=tuple(RunFailure(**f) for f in raw["failures"]),
    )


def _read_group(raw: Mapping[str, Any]) -> GroupSummary:
    fields = {k: v for k, v in raw.items() if k not in ("cost", "usage", "ends", "case_ids")}
    return GroupSummary(
        **fields,
        ends=_read_ends(raw["ends"]),
        usage=_read_usage(raw["usage"]),
        case_ids=tuple(raw["case_ids"]),
    )


def _read_ends(raw: Mapping[str, int]) -> dict[str, int]:
    return {reason: int(count) for reason, count in raw.items() if count}


def _read_usage(raw: Mapping[str, Any]) -> dict[Role, Usage]:
    return {role: Usage.from_dict(raw.get(role)) for role in ROLES}


def _eval_fields(raw: Mapping[str, Any]) -> dict[str, Any]:
    tuples = ("selected", "shards", "shards_planned")
    return {**raw, **{key: _tuple(raw.get(key)) for key in tuples if key in raw}}


def _tuple(value: Any) -> tuple[Any, ...] | None:
    return tuple(value) if value is not None else None
