"""Were two runs graded alike? The kit checks whose graders differ, per check (pure).

Each verdict of a kit check records its grader (:class:`agent_evals.report.rows.Grader`: the
check's version, its config's hash, and for a judged check the judge model and the rubric's
hash). For each case both sides hold, and each check (name and metric) both sides graded,
the graders must be the same: a verdict a changed check gave is not comparable with one the
old check gave (τ2-bench declared its scores across grader versions not comparable). The
report and the gate refuse such a comparison unless ``--across-grader-versions``; either way
the differences are listed, one line per check and kind of change. A side whose rows record
no grader (an older kit) is not held against it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agent_evals.report.model import CaseSummary
from agent_evals.report.rows import Grader

MAX_LISTED = 4
FIELDS = (("version", "version"), ("config", "config"), ("judge_model", "judge model"), ("rubric", "rubric"))


@dataclass(frozen=True)
class GraderChange:
    """One check, one kind of change, the cases where it happened."""

    check: str
    metric: str
    what: str  # version, config, judge model, rubric
    before: str
    after: str
    cases: tuple[str, ...]

    def line(self) -> str:
        shown = ", ".join(self.cases[:MAX_LISTED]) + (", …" if len(self.cases) > MAX_LISTED else "")
        metric = f" (metric {self.metric})" if self.metric != self.check else ""
        return f"{self.check}{metric}: {self.what} {self.before} → {self.after} in {len(self.cases)} case(s) ({shown})"


def grader_changes(pairs: Iterable[tuple[CaseSummary, CaseSummary]]) -> list[GraderChange]:
    """What differs between the graders of each (baseline, current) case pair."""
    found: dict[tuple[str, str, str, str, str], list[str]] = {}
    for before, after in pairs:
        then, now = _by_key(before.graders), _by_key(after.graders)
        for key in sorted(then.keys() & now.keys()):
            for field, what in FIELDS:
                old, new = _values(then[key], field), _values(now[key], field)
                if old != new:
                    found.setdefault((*key, what, old, new), []).append(after.id)
    return [GraderChange(check, metric, what, old, new, tuple(ids)) for (check, metric, what, old, new), ids in found.items()]


def mixed_graders(cases: Sequence[CaseSummary]) -> list[GraderChange]:
    """Within one set of results: the checks graded differently in different runs of a case."""
    found: dict[tuple[str, str, str, str], list[str]] = {}
    for case in cases:
        for key, graders in _by_key(case.graders).items():
            for field, what in FIELDS:
                values = sorted({str(getattr(g, field)) for g in graders})
                if len(values) > 1:
                    found.setdefault((*key, what, " / ".join(values)), []).append(case.id)
    return [GraderChange(check, metric, what, values, "(in one set of results)", tuple(ids))
            for (check, metric, what, values), ids in found.items()]


def _by_key(graders: Iterable[Grader]) -> dict[tuple[str, str], list[Grader]]:
    out: dict[tuple[str, str], list[Grader]] = {}
    for grader in graders:
        out.setdefault(grader.key, []).append(grader)
    return out


def _values(graders: Sequence[Grader], field: str) -> str:
    values = sorted({str(getattr(g, field)) for g in graders})
    shown = [f"v{v}" if field == "version" else (v or "(none)") for v in values]
    return "/".join(shown)
