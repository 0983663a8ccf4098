"""The sequential rule of ``--repeat-until-decided MAX``: is a case's verdict settled? (pure)

A case runs again only while its verdict could still change. After each round, for a case
with ``passed`` and ``failed`` graded runs (and ``errors``) of at most ``MAX`` runs, the rule
looks at every way its remaining runs could go — only the two extremes matter, since every
verdict below moves one way with the passes: all remaining runs pass, or all fail. The case
is **decided**, and stops, when its verdict now is the verdict it would have after ``MAX``
runs whatever they do:

- **the label** (``pass``, ``fail``, ``flaky``: every graded run passed, none did, some did):
  a case that has both passed and failed is flaky for good; one that has only passed (or
  only failed) could still become flaky, so it runs on (pass^k with k = its runs follows the
  label: 1 when every run passed, else 0);
- **the evidence against a baseline**, when one is given: the one-sided p-values of Fisher's
  test (:mod:`agent_evals.report.stats`) now and at both extremes after ``MAX`` runs must fall
  in the same band — significant for any family of up to ``cases + 1`` tests
  (p ≤ ``alpha / (cases + 1)``), in between (significant or not depending on the other cases:
  never decided), ``likely`` (``alpha`` < p ≤ ``likely``), or none — for getting worse and for
  getting better alike; and the smallest p-values its runs allow must reach the same family
  thresholds (``alpha / k``), so that the case counts in the report's family-wise test as it
  would after ``MAX`` runs; every outcome of the remaining runs is checked (at most ``MAX``);
- a case at ``MAX`` runs is decided (nothing is left to run).

So a case stopped early gets the verdict a flat ``--repeat MAX`` run that began with the same
runs would give it: no guess, no error rate. What it does not promise: pass^k with ``--k``
below the runs, and the pooled test of a group, which are computed from the runs the cases
took (the pooled test is also a member of the report's family: in the benchmark it never
changed a case's tier).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agent_evals.report.stats import Table, fisher

Band = Literal["significant", "between", "likely", "none"]
FIRST_ROUND = 2  # runs a case gets before the rule is asked: the fewest that can settle a label


@dataclass(frozen=True)
class Decision:
    decided: bool
    why: str  # what settled it, or what is still open


def decide(passed: int, failed: int, errors: int, *, max_runs: int, baseline: tuple[int, int] | None = None,
           cases: int = 1, alpha: float = 0.05, likely: float = 0.2) -> Decision:
    """Whether the case's verdict is settled (``baseline``: its graded passes and runs there)."""
    runs = passed + failed + errors
    left = max_runs - runs
    if left <= 0:
        return Decision(True, f"{runs} of {max_runs} runs")
    if not (passed and failed):
        label = "pass" if passed else "fail" if failed else "error"
        return Decision(False, f"{label} so far: one more run could change it")
    if baseline is None or baseline[1] == 0:
        return Decision(True, "flaky")
    now = _settled(Table(baseline[0], baseline[1], passed, passed + failed), alpha, likely, cases)
    finals = {_settled(Table(baseline[0], baseline[1], passed + extra, passed + failed + left), alpha, likely, cases)
              for extra in range(left + 1)}
    if finals == {now} and "between" not in now[:2]:
        return Decision(True, f"flaky; evidence {now[0]} (worse), {now[1]} (better) whatever the {left} run(s) left do")
    return Decision(False, f"flaky; the evidence against the baseline could still change ({left} run(s) left)")


def _settled(table: Table, alpha: float, likely: float, cases: int) -> tuple[Band, Band, int, int]:
    """The bands of the two p-values, and how many family thresholds (``alpha / k``, k ≤ cases + 1) the
    smallest p-values the runs allow reach: so a stopped case counts in the family as it would after MAX."""
    tails = fisher(table)
    return (_band(tails.worse, alpha, likely, cases), _band(tails.better, alpha, alpha, cases),
            _reach(tails.least_worse, alpha, cases), _reach(tails.least_better, alpha, cases))


def _reach(least: float, alpha: float, cases: int) -> int:
    return sum(1 for k in range(1, cases + 2) if least <= alpha / k + 1e-15)


def _band(p: float, alpha: float, likely: float, cases: int) -> Band:
    if p <= alpha / (cases + 1):
        return "significant"
    if p <= alpha:
        return "between"
    return "likely" if p <= likely else "none"
