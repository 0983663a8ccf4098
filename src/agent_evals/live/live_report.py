"""The live report: pass rate per day and per agent with 95% confidence intervals, failure patterns,
how users' ratings agree with the verdicts, cost by role (pure; fed one scored conversation at a time).

* **Pass rate** = passed / graded conversations (errors are counted apart, never as failures);
  the interval is Wilson's score interval at 95%, which stays inside 0..1 and is honest for
  small samples (3 of 3 passed is 44%–100%, not 100%).
* **Failure patterns**: the failed checks grouped by metric, tool and JSON path, as
  ``agent-evals report`` groups them (:func:`agent_evals.report.failure_patterns.failure_patterns`).
* **Agreement**: of the graded conversations the user rated, how often thumbs-up met a pass and
  thumbs-down a fail, with Cohen's kappa; the thumbs-down that passed every check are listed
  (what the policy does not see: candidates for ``agent-evals live promote``).
* **Cost by role**: the tokens and cost of the agent (the conversations) and of the judge (scoring).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from agent_evals.live.scoring import Scored
from agent_evals.record import ROLES, Role, Usage
from agent_evals.report.failure_patterns import failure_patterns
from agent_evals.report.rows import Row, row_from_promptfoo

Z95 = 1.959963984540054


def wilson(passed: int, total: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval of ``passed / total`` (0..1 each); (0, 1) for no data."""
    if total <= 0:
        return 0.0, 1.0
    p = passed / total
    centre = p + z * z / (2 * total)
    spread = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total))
    low, high = (centre - spread) / (1 + z * z / total), (centre + spread) / (1 + z * z / total)
    return max(0.0, low), min(1.0, high)


@dataclass
class Tally:
    passed: int = 0
    failed: int = 0
    errors: int = 0

    @property
    def graded(self) -> int:
        return self.passed + self.failed

    @property
    def rate(self) -> float | None:
        return self.passed / self.graded if self.graded else None

    def interval(self) -> tuple[float, float]:
        return wilson(self.passed, self.graded)

    def add(self, outcome: str) -> None:
        if outcome == "pass":
            self.passed += 1
        elif outcome == "fail":
            self.failed += 1
        else:
            self.errors += 1

    def to_json(self) -> dict[str, Any]:
        low, high = self.interval()
        return {"passed": self.passed, "failed": self.failed, "errors": self.errors, "graded": self.graded,
                "pass_rate": self.rate, "ci95": [round(low, 4), round(high, 4)] if self.graded else None}


class Facts(NamedTuple):
    """What the report and the eval's totals need of one scored conversation (small: scoring may run in
    worker processes, which hand these back with the row's text)."""

    conversation_id: str
    agent: str
    day: str
    outcome: str
    error_kind: str | None
    not_graded: tuple[str, ...]
    rating: str | None
    usage: dict[Role, Usage]
    score: float
    named_scores: dict[str, float]
    asserts_passed: int
    asserts_failed: int
    failed_row: Row | None


def facts_of(scored: Scored, row: Mapping[str, Any]) -> Facts:
    conversation = scored.conversation
    return Facts(
        conversation.id, conversation.agent.name, str(row["testCase"]["metadata"]["day"]), scored.outcome,
        scored.error_kind, tuple(scored.not_graded), conversation.feedback.rating if conversation.feedback else None,
        dict(scored.record.usage), float(row.get("score") or 0.0), dict(row.get("namedScores") or {}),
        sum(1 for r in scored.results if r["pass"]), sum(1 for r in scored.results if not r["pass"]),
        row_from_promptfoo(dict(row), "") if scored.outcome == "fail" else None,
    )


@dataclass
class LiveReport:
    description: str = ""
    eval_id: str = ""
    total: Tally = field(default_factory=Tally)
    by_day_agent: dict[tuple[str, str], Tally] = field(default_factory=lambda: defaultdict(Tally))
    by_agent: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    error_kinds: Counter[str] = field(default_factory=Counter)
    not_graded: Counter[str] = field(default_factory=Counter)
    ratings: Counter[tuple[str, str]] = field(default_factory=Counter)  # (rating, outcome)
    down_but_passed: list[str] = field(default_factory=list)
    usage: dict[Role, Usage] = field(default_factory=lambda: {role: Usage() for role in ROLES})
    failed_rows: list[Row] = field(default_factory=list)

    def add(self, facts: Facts) -> None:
        for tally in (self.total, self.by_day_agent[(facts.day, facts.agent)], self.by_agent[facts.agent]):
            tally.add(facts.outcome)
        if facts.outcome == "error":
            self.error_kinds[facts.error_kind or "internal"] += 1
        self.not_graded.update(line.split(":", 1)[0] for line in facts.not_graded)
        if facts.rating and facts.outcome != "error":
            self.ratings[(facts.rating, facts.outcome)] += 1
            if facts.rating == "down" and facts.outcome == "pass":
                self.down_but_passed.append(facts.conversation_id)
        for role, usage in facts.usage.items():
            self.usage[role] = self.usage[role] + usage
        if facts.failed_row is not None:
            self.failed_rows.append(facts.failed_row)

    # -- derived ---------------------------------------------------------------------------
    def patterns(self) -> list[Any]:
        return failure_patterns(self.failed_rows)

    def pattern_shares(self) -> dict[str, float]:
        """Each failure pattern's name → the share of graded conversations it was seen in."""
        graded = self.total.graded or 1
        return {p.name: len(p.cases) / graded for p in self.patterns()}

    def agreement(self) -> dict[str, Any]:
        counts = self.ratings
        rated = sum(counts.values())
        agree = counts[("up", "pass")] + counts[("down", "fail")]
        kappa = None
        if rated:
            up, passes = counts[("up", "pass")] + counts[("up", "fail")], counts[("up", "pass")] + counts[("down", "pass")]
            expected = (up * passes + (rated - up) * (rated - passes)) / (rated * rated)
            kappa = (agree / rated - expected) / (1 - expected) if expected < 1 else None
        return {
            "rated": rated, "agreement": agree / rated if rated else None, "kappa": kappa,
            "up_pass": counts[("up", "pass")], "up_fail": counts[("up", "fail")],
            "down_pass": counts[("down", "pass")], "down_fail": counts[("down", "fail")],
            "down_but_passed": list(self.down_but_passed),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "agent-evals/live-report@1", "eval_id": self.eval_id, "description": self.description,
            "total": self.total.to_json(),
            "agents": {agent: tally.to_json() for agent, tally in sorted(self.by_agent.items())},
            "days": [{"day": day, "agent": agent, **tally.to_json()}
                     for (day, agent), tally in sorted(self.by_day_agent.items())],
            "errors": dict(self.error_kinds), "not_graded": dict(self.not_graded),
            "failure_patterns": [{"kind": p.kind, "name": p.name, "conversations": list(p.cases), "share":
                                  round(len(p.cases) / (self.total.graded or 1), 4)} for p in self.patterns()],
            "agreement": self.agreement(),
            "cost_by_role": {role: usage.as_dict() for role, usage in self.usage.items()},
        }


def _rate(tally: Tally) -> str:
    if not tally.graded:
        return "no graded conversation"
    low, high = tally.interval()
    return f"{tally.rate:.0%} ({tally.passed}/{tally.graded}; 95% CI {low:.0%}–{high:.0%})"


def render_terminal(report: LiveReport) -> str:
    lines = [f"live: {report.description}", f"  pass rate {_rate(report.total)}"
             + (f"; {report.total.errors} error(s): " + ", ".join(f"{k} {n}" for k, n in report.error_kinds.most_common())
                if report.total.errors else "")]
    for agent, tally in sorted(report.by_agent.items()):
        lines.append(f"  {agent:<14} {_rate(tally)}")
        for (day, name), day_tally in sorted(report.by_day_agent.items()):
            if name == agent and len(report.by_day_agent) > len(report.by_agent):
                lines.append(f"    {day}   {_rate(day_tally)}")
    patterns = report.patterns()
    if patterns:
        lines.append("  failure patterns:")
        lines += [f"    {p.kind} {p.name}: {len(p.cases)} conversation(s) ({', '.join(p.cases[:3])}"
                  f"{', …' if len(p.cases) > 3 else ''})" for p in patterns[:10]]
    if report.not_graded:
        lines.append("  not graded: " + ", ".join(f"{k} ×{n}" for k, n in report.not_graded.most_common()))
    agreement = report.agreement()
    if agreement["rated"]:
        kappa = f", kappa {agreement['kappa']:.2f}" if agreement["kappa"] is not None else ""
        lines.append(f"  ratings vs verdicts: {agreement['agreement']:.0%} agree of {agreement['rated']} rated{kappa} "
                     f"(up+pass {agreement['up_pass']}, up+fail {agreement['up_fail']}, down+fail {agreement['down_fail']}, "
                     f"down+pass {agreement['down_pass']})")
        if agreement["down_but_passed"]:
            lines.append("    thumbs-down that passed every check: " + ", ".join(agreement["down_but_passed"][:5]))
    cost = ", ".join(f"{role} {u.total_tokens} tokens ${u.cost:.4f}" for role, u in report.usage.items() if u.calls)
    lines.append(f"  cost by role: {cost or 'none'}")
    return "\n".join(lines)


def render_markdown(report: LiveReport) -> str:
    out = [f"## Live evaluation", "", report.description, "", "| agent | day | pass rate | 95% CI | passed | graded | errors |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for (day, agent), tally in sorted(report.by_day_agent.items(), key=lambda item: (item[0][1], item[0][0])):
        low, high = tally.interval()
        rate = f"{tally.rate:.1%}" if tally.rate is not None else "–"
        out.append(f"| {agent} | {day} | {rate} | {low:.1%}–{high:.1%} | {tally.passed} | {tally.graded} | {tally.errors} |")
    out += ["", f"**All**: {_rate(report.total)}", ""]
    patterns = report.patterns()
    if patterns:
        out += ["| failure pattern | conversations |", "| --- | --- |"]
        out += [f"| {p.kind} `{p.name}` | {len(p.cases)} |" for p in patterns[:15]]
        out.append("")
    agreement = report.agreement()
    if agreement["rated"]:
        out.append(f"Ratings vs verdicts: {agreement['agreement']:.0%} agree of {agreement['rated']} rated "
                   f"(down but passed: {agreement['down_pass']}, up but failed: {agreement['up_fail']}).")
        out.append("")
    out += ["| role | calls | tokens | cost |", "| --- | --- | --- | --- |"]
    out += [f"| {role} | {u.calls} | {u.total_tokens} | ${u.cost:.4f} |" for role, u in report.usage.items()]
    return "\n".join(out) + "\n"
