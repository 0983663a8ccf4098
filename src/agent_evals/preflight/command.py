"""``agent-evals check``: print every problem, one line each; exit 2 when there is one."""

from __future__ import annotations

from agent_evals.preflight import Preflight, preflight
from agent_evals.suites.promptfoo_args import FlagError, read_flags
from agent_evals.suites.discovery import Suite, select


def report(result: Preflight, suites: list[Suite]) -> str:
    notes = [f"note: {note}" for note in result.notes]
    if result.ok:
        counts = [result.cases(s.name) for s in suites]
        cases = "?" if any(c is None for c in counts) else str(sum(c or 0 for c in counts))
        return "\n".join([*notes, f"check: ok ({cases} case(s) in {len(suites)} suite(s))"])
    lines = [*notes, *(f"  {problem}" for problem in result.problems)]
    lines.append(f"check: {len(result.problems)} problem(s); nothing was run")
    return "\n".join(lines)


def check_command(suite: str, *, replay: str | None, offline: bool, allow_stale: bool, promptfoo_args: list[str]) -> int:
    try:
        suites = select(suite)
        flags = read_flags(promptfoo_args)
    except (ValueError, FlagError) as exc:
        print(f"check: {exc}")
        return 2
    result = preflight(suites, flags, replay=replay, offline=offline, allow_stale=allow_stale)
    print(report(result, suites))
    return 0 if result.ok else 2
