"""A baseline of another suite or another agent is refused, naming both (pure).

Comparing runs of one agent over time is the point of a baseline; comparing one agent with
another, or one suite's C01 with another suite's, says nothing, so
:func:`refuse_foreign` raises a one-line :class:`ReportInputError`. The suites come from the
run manifests (each case's ``suite``), the agents from the rows' run records (the agent's
``name``; a changed model, temperature or instructions file is what a baseline compares, and
is allowed). What is unknown on either side is not held against it.
"""

from __future__ import annotations

from agent_evals.report.errors import ReportInputError
from agent_evals.report.model import Report


def refuse_foreign(current: Report, baseline: Report, matched_by: str) -> None:
    now = {case.suite for case in current.cases if case.suite}
    then = {case.suite for case in baseline.cases if case.suite}
    if now and then and not now & then:
        raise ReportInputError(
            f"the baseline is of suite {', '.join(sorted(then))}; the results are of suite {', '.join(sorted(now))}: "
            "a baseline must come from the same suite"
        )
    for provider, ours, theirs in _agents(current, baseline, matched_by):
        if ours and theirs and ours != theirs:
            raise ReportInputError(
                f"the baseline is of agent {theirs}; the results are of agent {ours}"
                + (f" (provider {provider})" if provider else "") + ": a baseline must come from the same agent"
            )


def _agents(current: Report, baseline: Report, matched_by: str) -> list[tuple[str, str, str]]:
    now = {provider: agent.name for provider, agent in current.label.agents}
    then = {provider: agent.name for provider, agent in baseline.label.agents}
    if matched_by == "id":
        ours, theirs = set(now.values()), set(then.values())
        if len(ours) == 1 and len(theirs) == 1:
            return [("", next(iter(ours)), next(iter(theirs)))]
        return []
    return [(provider, now[provider], then[provider]) for provider in now if provider in then]
