"""Error analysis: the failures of all runs grouped by assertion metric, by tool and by JSON
path, so a pattern shows at once ("``/config/location`` wrong in 4 cases") (pure).

Every failing check of a failed run counts (not only the first); the tools and paths come
from the kit's reasons (:mod:`agent_evals.report.reasons`). A pattern lists the cases it
was seen in and the number of failed runs; the most widespread come first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agent_evals.report.aggregate import natural_key
from agent_evals.report.model import Pattern, PatternKind
from agent_evals.report.reasons import named_in
from agent_evals.report.rows import Row


@dataclass
class _Tally:
    cases: dict[str, None] = field(default_factory=dict)
    runs: set[tuple[str, int, int]] = field(default_factory=set)
    metrics: dict[str, None] = field(default_factory=dict)


def failure_patterns(rows: Iterable[Row], *, label_providers: bool = False) -> list[Pattern]:
    """Patterns by metric, then tool, then path; each sorted by cases, runs, name."""
    tallies: dict[tuple[PatternKind, str], _Tally] = {}
    for row in rows:
        if row.outcome != "fail":
            continue
        case = f"{row.provider}:{row.case_id}" if label_providers else row.case_id
        run = (row.eval_id, row.test_idx, row.prompt_idx)
        for check in row.failures:
            named = named_in(check.reason)
            keys: list[tuple[PatternKind, str]] = [("metric", check.metric)]
            keys += [("tool", tool) for tool in named.tools] + [("path", path) for path in named.paths]
            for key in keys:
                tally = tallies.setdefault(key, _Tally())
                tally.cases[case] = None
                tally.runs.add(run)
                tally.metrics[check.metric] = None
    patterns = [
        Pattern(
            kind,
            name,
            tuple(sorted(t.cases, key=natural_key)),
            len(t.runs),
            tuple(t.metrics) if kind != "metric" else (),
        )
        for (kind, name), t in tallies.items()
    ]
    order = {"metric": 0, "tool": 1, "path": 2}
    return sorted(patterns, key=lambda p: (order[p.kind], -len(p.cases), -p.runs, p.name))
