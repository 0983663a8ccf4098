"""Can these results hold a release gate at all? (pure)

A gate judges the agent. Two kinds of results cannot show it:

- a **replay**: the models' answers come from recordings, so it proves that the suites, the
  tools and the checks work, not what the agent does now;
- a run where **deciding checks were not graded** (no judge model, cassettes without judge
  replies): its rows passed without them, so a pass says less than it seems. A check of weight 0
  decides nothing and does not count here.

Each is a rule that is *undecided* (the gate exits 2, "cannot decide", saying why) unless the
gate file allows it (``allow_replay: true``, ``allow_not_graded: true``); then it holds and says
what was allowed.
"""

from __future__ import annotations

from agent_evals.report.gate_file import Gate
from agent_evals.report.gate_rule import Rule, listed
from agent_evals.report.model import CaseSummary, Report


def trust_rules(gate: Gate, report: Report) -> list[Rule]:
    """The replay rule and the not-graded rule, when they apply."""
    rules = []
    replayed = [info.eval_id + (f" ({info.suite})" if info.suite else "") for info in report.evals
                if info.mode == "replay"]
    if replayed:
        rules.append(_replay(gate, replayed, len(report.evals)))
    missing = [case for case in report.cases if case.not_graded_deciding]
    if missing:
        rules.append(_not_graded(gate, missing))
    return rules


def _replay(gate: Gate, replayed: list[str], evals: int) -> Rule:
    what = (f"{len(replayed)} of {evals} eval(s) replayed recorded model answers ({listed(replayed, 3)}): "
            "a replay shows that the suites, tools and checks work, not what the agent does now")
    if gate.allow_replay:
        return Rule("allow_replay", "holds", what + "; allowed by the gate file")
    return Rule("replay", "undecided", what + "; run the agent live, or set allow_replay: true in the gate file")


def _not_graded(gate: Gate, cases: list[CaseSummary]) -> Rule:
    total = sum(case.not_graded_deciding for case in cases)
    ids = [f"{case.id} {case.not_graded_deciding}" for case in cases]
    what = (f"{total} deciding check(s) were not graded in {len(cases)} case(s) ({listed(ids)}): "
            "their rows passed without them")
    if gate.allow_not_graded:
        return Rule("allow_not_graded", "holds", what + "; allowed by the gate file")
    return Rule("not_graded", "undecided",
                what + "; configure the judge model (JUDGE_MODEL), or set allow_not_graded: true in the gate file")
