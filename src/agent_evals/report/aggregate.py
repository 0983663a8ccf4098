"""Rows to cases, cases to groups (pure).

A case is every row with the same provider and case id, across repeats and evals. Its
``runs`` count every row (a re-run of an invalid row takes its place: :mod:`.attempts`);
``passed`` and ``failed`` count the graded ones; an error, an invalid row (the simulated user
spoiled it) and an incomplete one (a deciding check was not graded) are neither. Groups (``metadata.group``), priorities (``metadata.priority``) and the totals
aggregate cases the same way; their pass^k is the mean of their cases' pass^k.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from statistics import fmean

from agent_evals.record import ROLES, Role, Usage
from agent_evals.report.model import CaseSummary, GroupSummary, RunFailure, Verdict
from agent_evals.report.pass_k import is_flaky, pass_hat_k
from agent_evals.report.rows import Outcome, Row, is_deciding

NO_GROUP = "(none)"


def group_rows(rows: Iterable[Row]) -> dict[tuple[str, str], list[Row]]:
    """Rows by (provider, case id), in the order cases first appear."""
    cases: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        cases.setdefault((row.provider, row.case_id), []).append(row)
    return cases


def summarize_case(
    rows: Sequence[Row], k: int | None = None, suite: str | None = None, superseded: int = 0
) -> CaseSummary:
    """One case over its runs; ``k`` None means k = its graded runs; ``superseded``: its invalid
    attempts a re-run took the place of."""
    first = rows[0]
    outcomes = Counter(row.outcome for row in rows)
    passed, failed = outcomes["pass"], outcomes["fail"]
    graded = passed + failed
    failures = tuple(_run_failure(row) for row in rows if row.outcome == "fail")
    return CaseSummary(
        id=first.case_id,
        provider=first.provider,
        group=first.group,
        priority=first.priority,
        suite=suite,
        runs=len(rows),
        passed=passed,
        failed=failed,
        errors=outcomes["error"],
        k=(k if k is not None else graded) or None,
        pass_hat_k=pass_hat_k(graded, passed, k) if graded else None,
        pass_rate=passed / graded if graded else None,
        flaky=is_flaky(passed, failed),
        verdict=verdict(passed, failed, outcomes),
        ends=dict(Counter(end_of(row) for row in rows)),
        error_kinds=dict(Counter(row.error_kind for row in rows if row.error_kind)),
        mean_turns=_mean(row.turns for row in rows),
        mean_tool_calls=_mean(row.tool_calls for row in rows),
        usage=sum_usage(row.usage for row in rows),
        not_graded=sum(len(row.not_graded) for row in rows),
        first_failure=failures[0].reason if failures else None,
        failures=failures,
        first_error=next((_error_text(row) for row in rows if row.outcome == "error"), None)
        or next((_error_text(row) for row in rows if row.outcome == "invalid"), None),
        id_source=first.id_source,
        mean_latency_ms=_mean(row.latency_ms for row in rows),
        not_graded_deciding=sum(1 for row in rows for item in row.not_graded if is_deciding(item)),
        graders=tuple(sorted({grader for row in rows for grader in row.graders})),
        invalid=outcomes["invalid"],
        incomplete=outcomes["incomplete"],
        attempts=len(rows) + superseded,
    )


def natural_key(text: str) -> tuple[tuple[int, str], ...]:
    """``C2`` before ``C10``."""
    return tuple(
        (0, part.zfill(12)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part
    )


def verdict(passed: int, failed: int, outcomes: Mapping[Outcome, int] | None = None) -> Verdict:
    """The case's verdict from its graded runs; without one, why not: errors first, then a check
    not graded (incomplete), then a simulated user that spoiled every run (invalid)."""
    if passed and failed:
        return "flaky"
    if passed:
        return "pass"
    if failed:
        return "fail"
    outcomes = outcomes or {}
    if not outcomes.get("error") and outcomes.get("incomplete"):
        return "incomplete"
    if not outcomes.get("error") and outcomes.get("invalid"):
        return "invalid"
    return "error"


def end_of(row: Row) -> str:
    """How the conversation ended (``error`` for an error row without a record)."""
    return row.end or ("error" if row.outcome == "error" else "unknown")


def summarize_groups(
    cases: Sequence[CaseSummary],
    rows: Mapping[tuple[str, str], Sequence[Row]],
    by: Callable[[CaseSummary], str | None],
) -> list[GroupSummary]:
    """One summary per value of ``by`` (a case without one is in ``(none)``), sorted by name."""
    members: dict[str, list[CaseSummary]] = {}
    for case in cases:
        members.setdefault(by(case) or NO_GROUP, []).append(case)
    return [summarize_group(name, members[name], rows) for name in sorted(members)]


def summarize_group(
    name: str, cases: Sequence[CaseSummary], rows: Mapping[tuple[str, str], Sequence[Row]]
) -> GroupSummary:
    group_rows_ = [row for case in cases for row in rows.get(case.key, ())]
    passed = sum(case.passed for case in cases)
    failed = sum(case.failed for case in cases)
    ends: Counter[str] = Counter()
    for case in cases:
        ends.update(case.ends)
    scored = [case.pass_hat_k for case in cases if case.pass_hat_k is not None]
    return GroupSummary(
        name=name,
        cases=len(cases),
        runs=sum(case.runs for case in cases),
        passed=passed,
        failed=failed,
        errors=sum(case.errors for case in cases),
        flaky=sum(1 for case in cases if case.flaky),
        pass_hat_k=fmean(scored) if scored else None,
        pass_rate=passed / (passed + failed) if passed + failed else None,
        ends=dict(ends),
        mean_turns=_mean(row.turns for row in group_rows_),
        mean_tool_calls=_mean(row.tool_calls for row in group_rows_),
        usage=sum_usage(case.usage for case in cases),
        not_graded=sum(case.not_graded for case in cases),
        case_ids=tuple(case.id for case in cases),
        invalid=sum(case.invalid for case in cases),
        incomplete=sum(case.incomplete for case in cases),
    )


def sum_usage(usages: Iterable[Mapping[Role, Usage]]) -> dict[Role, Usage]:
    """Usage by role added up (plain sums: 20,000 rows add up in milliseconds)."""
    totals: dict[Role, list[float]] = {role: [0, 0, 0, 0, 0.0] for role in ROLES}
    for usage in usages:
        for role in ROLES:
            u = usage.get(role)
            if u is not None:
                t = totals[role]
                t[0] += u.prompt_tokens
                t[1] += u.completion_tokens
                t[2] += u.total_tokens
                t[3] += u.calls
                t[4] += u.cost
    return {
        role: Usage(int(t[0]), int(t[1]), int(t[2]), int(t[3]), round(t[4], 8)) for role, t in totals.items()
    }


def _run_failure(row: Row) -> RunFailure:
    check = row.first_failure
    if check is None:  # a failed row without a failing entry: Promptfoo's own reason is lost
        return RunFailure(row.eval_id, row.test_idx, "(unknown)", "failed without a failing assertion entry")
    return RunFailure(row.eval_id, row.test_idx, check.metric, check.reason)


def _error_text(row: Row) -> str:
    text = row.error or ""
    return text if text.startswith("[") else f"[{row.error_kind}] {text}".rstrip()


def _mean(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return fmean(present) if present else None
