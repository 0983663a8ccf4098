"""A report against a baseline: regressions, improvements, new and removed cases, metric
changes; matching by provider and id, by id alone when the providers differ; nothing in
common is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_evals.report import ReportInputError, build_report, compare, load_results
from agent_evals.report.compare import change_of
from agent_evals.report.model import Report
from agent_evals.testing.promptfoo_results import result_row
from tests.report.conftest import write_results

FAIL = [
    (
        "tool_sequence",
        "tool_sequence in_order: expected a; actual (no tool calls); missing a at the start (position 1)",
    )
]


def _runs(
    case: str, outcomes: str, provider: str = "spoke", start: int = 0, **kw: Any
) -> list[dict[str, Any]]:
    """Rows of one case: ``outcomes`` like "ppf" (p pass, f fail, e error)."""
    kinds = {"p": "pass", "f": "fail", "e": "error"}
    return [
        result_row(case, start + i, kinds[o], provider=provider, failing=FAIL if o == "f" else (), **kw)  # type: ignore[arg-type]
        for i, o in enumerate(outcomes)
    ]


def _report(tmp_path: Path, name: str, rows: list[dict[str, Any]]) -> Report:
    loaded = load_results([str(write_results(tmp_path, rows, f"{name}.json", eval_id=f"eval-{name}"))])
    return build_report(loaded.evals, loaded.runs, loaded.rows)


def test_changes_per_case(tmp_path: Path) -> None:
    baseline = _report(
        tmp_path,
        "base",
        [
            *_runs("C01", "ppp"),
            *_runs("C02", "ppp", start=3),
            *_runs("C03", "fff", start=6),
            *_runs("C04", "pfp", start=9),
            *_runs("C05", "ppp", start=12),
            *_runs("C06", "ppp", start=15),
            *_runs("C08", "fpf", start=18),
        ],
    )
    current = _report(
        tmp_path,
        "now",
        [
            *_runs("C01", "ppp"),  # same
            *_runs("C02", "pfp", start=3),  # regression: passed, now flaky
            *_runs("C03", "ppp", start=6),  # improvement
            *_runs("C04", "ppp", start=9),  # improvement: flaky to pass
            *_runs("C05", "fff", start=12),  # regression: passed, now fails
            *_runs("C07", "ppp", start=15),  # new (C06 removed)
            *_runs("C08", "fff", start=18),  # changed: flaky to fail
            *_runs("C09", "eee", start=21),  # new, no graded run
        ],
    )
    comparison = compare(current, baseline)
    changes = {c.id: (c.change, c.before, c.after) for c in comparison.cases}
    assert changes == {
        "C01": ("same", "pass", "pass"),
        "C02": ("regression", "pass", "flaky"),
        "C03": ("improvement", "fail", "pass"),
        "C04": ("improvement", "flaky", "pass"),
        "C05": ("regression", "pass", "fail"),
        "C07": ("new", None, "pass"),
        "C08": ("changed", "flaky", "fail"),
        "C09": ("new", None, "error"),
        "C06": ("removed", "pass", None),
    }
    assert [c.id for c in comparison.of("regression")] == ["C02", "C05"]
    assert comparison.matched_by == "provider_and_id"
    c02 = next(c for c in comparison.cases if c.id == "C02")
    assert (c02.pass_hat_k_before, c02.pass_hat_k_after) == (1.0, 0.0)


@pytest.mark.parametrize(
    ("before", "after", "change"),
    [
        ("pass", "fail", "regression"),
        ("pass", "flaky", "regression"),
        ("fail", "pass", "improvement"),
        ("flaky", "pass", "improvement"),
        ("fail", "flaky", "changed"),
        ("pass", "pass", "same"),
        ("pass", "error", "no_verdict"),
        ("error", "pass", "no_verdict"),
    ],
)
def test_change_of(before: str, after: str, change: str) -> None:
    assert change_of(before, after) == change  # type: ignore[arg-type]


def test_metric_changes_follow_their_direction(tmp_path: Path) -> None:
    baseline = _report(
        tmp_path, "base", [result_row("C01", 0, named_scores={"reliability": 1.0, "collateral_changes": 0})]
    )
    current = _report(
        tmp_path, "now", [result_row("C01", 0, named_scores={"reliability": 0.5, "collateral_changes": 2})]
    )
    metrics = {m.name: m for m in compare(current, baseline).metrics}
    assert (metrics["reliability"].delta, metrics["reliability"].worse) == (-0.5, True)
    assert (metrics["collateral_changes"].delta, metrics["collateral_changes"].worse) == (
        2.0,
        True,
    )  # lower is better
    better = {m.name: m for m in compare(baseline, current).metrics}
    assert not better["reliability"].worse and not better["collateral_changes"].worse


def test_each_side_says_what_it_ran(tmp_path: Path) -> None:
    agent = {"name": "agent", "model": "gpt-4o", "temperature": 0.0, "instructions_sha256": "cd" * 32}
    baseline = _report(tmp_path, "base", _runs("C01", "pp"))
    current = _report(tmp_path, "now", _runs("C01", "pp", agent=agent))
    comparison = compare(current, baseline)
    assert [a.model for _, a in comparison.baseline.agents] == ["agent-model"]
    assert [(a.model, a.temperature, a.instructions_sha256[:4]) for _, a in comparison.current.agents] == [
        ("gpt-4o", 0.0, "cdcd")
    ]


def test_two_providers_one_each_side_match_by_id(tmp_path: Path) -> None:
    baseline = _report(tmp_path, "base", _runs("C01", "pp", provider="baseline"))
    current = _report(tmp_path, "now", _runs("C01", "pf", provider="terse"))
    comparison = compare(current, baseline)
    assert comparison.matched_by == "id" and [c.change for c in comparison.cases] == ["regression"]


def test_nothing_in_common_is_refused(tmp_path: Path) -> None:
    baseline = _report(tmp_path, "base", _runs("Q01", "pp"))
    current = _report(tmp_path, "now", _runs("C01", "pp"))
    with pytest.raises(
        ReportInputError,
        match=r"^the baseline has no case in common with the current results "
        r"\(baseline: 1 case\(s\) \(Q01\) of provider spoke; current: 1 case\(s\) \(C01\) of provider spoke\)$",
    ):
        compare(current, baseline)
