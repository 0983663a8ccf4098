"""``agent-evals cases expand <suite|all> [--check]``, and the preflight's sync check."""

from __future__ import annotations

from agent_evals.cases.expand import expand
from agent_evals.cases.output import out_of_sync, write
from agent_evals.cases.source import CaseFactoryError, has_cases, load_source
from agent_evals.suites.discovery import Suite, select


def check_suite(suite: Suite) -> list[str]:
    """One line per problem: the templates or table cannot make cases, or a generated file is
    missing or out of sync. Nothing for a suite without templates."""
    if not has_cases(suite.folder):
        return []
    try:
        expansion = expand(load_source(suite.folder, suite.name))
    except CaseFactoryError as exc:
        return [f"{suite.name}: {problem}" for problem in exc.problems]
    return [f"{suite.name}: {line}" for _path, line in out_of_sync(expansion)]


def expand_command(name: str, *, check: bool = False) -> int:
    """Write (or with ``check``, only compare) the generated files; 0 when done (in sync), 1 out of
    sync, 2 on a problem."""
    try:
        suites = [s for s in select(name) if has_cases(s.folder)]
    except ValueError as exc:
        print(f"cases: {exc}")
        return 2
    if not suites:
        print(f"cases: no suite in {name!r} has cases/templates.yaml")
        return 2
    worst = 0
    for suite in suites:
        try:
            expansion = expand(load_source(suite.folder, suite.name))
        except CaseFactoryError as exc:
            for problem in exc.problems:
                print(f"cases: {suite.name}: {problem}")
            worst = 2
            continue
        if check:
            stale = out_of_sync(expansion)
            for _path, line in stale:
                print(f"cases: {suite.name}: {line}")
            if not stale:
                print(f"cases: {suite.name}: in sync ({len(expansion.cases)} case(s))")
            worst = max(worst, 1 if stale else 0)
            continue
        written = write(expansion)
        shown = ", ".join(expansion.source.shown(p) for p in written)
        print(f"cases: {suite.name}: {len(expansion.cases)} case(s) → {shown}")
    return worst
