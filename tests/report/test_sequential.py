"""The sequential rule of --repeat-until-decided stops exactly where its documentation says: a case
stops once its label and its evidence against the baseline are what they would be after MAX runs
whatever the remaining runs do — checked case by case, and for every sequence of outcomes."""

from __future__ import annotations

import itertools

import pytest

from agent_evals.report.evidence import ALPHA, LIKELY
from agent_evals.report.sequential import FIRST_ROUND, decide
from agent_evals.report.stats import Table, fisher


@pytest.mark.parametrize(
    ("passed", "failed", "errors", "decided", "why"),
    [
        (1, 1, 0, True, "flaky"),  # both seen: flaky whatever comes next
        (2, 0, 0, False, "pass so far: one more run could change it"),
        (0, 2, 0, False, "fail so far: one more run could change it"),
        (0, 0, 2, False, "error so far: one more run could change it"),
        (5, 0, 0, True, "5 of 5 runs"),
        (3, 0, 2, True, "5 of 5 runs"),  # errors are runs too, as in --repeat 5
    ],
)
def test_without_a_baseline(passed: int, failed: int, errors: int, decided: bool, why: str) -> None:
    decision = decide(passed, failed, errors, max_runs=5)
    assert (decision.decided, decision.why) == (decided, why)


def test_against_a_baseline_the_evidence_must_be_settled_too() -> None:
    # 1 of 2 now against 5 of 5: p (worse) 2/7 now; after 5 runs anything from 1/5 (p 0.024) to 4/5 (0.5)
    open_ = decide(1, 1, 0, max_runs=5, baseline=(5, 5), cases=10)
    assert (open_.decided, open_.why) == (False, "flaky; the evidence against the baseline could still change "
                                                 "(3 run(s) left)")
    # 3 of 4 against 5 of 5, one run left: 3/5 or 4/5 after five, no evidence either way in both, and the
    # smallest p-values those runs allow reach the same family thresholds as now
    settled = decide(3, 1, 0, max_runs=5, baseline=(5, 5), cases=10)
    assert (settled.decided, settled.why) == (True, "flaky; evidence none (worse), none (better) whatever the 1 "
                                                    "run(s) left do")
    assert not decide(2, 2, 0, max_runs=5, baseline=(5, 5), cases=10).decided  # 2/5 would be a likely regression


def _label(outcomes: tuple[bool, ...]) -> str:
    return "flaky" if any(outcomes) and not all(outcomes) else "pass" if all(outcomes) else "fail"


def _tiers(baseline: tuple[int, int], outcomes: tuple[bool, ...], cases: int) -> set[str]:
    """The evidence tier under every family threshold the report could use (alpha / K, K ≤ cases + 1)."""
    tails = fisher(Table(baseline[0], baseline[1], sum(outcomes), len(outcomes)))
    out = set()
    for k in range(1, cases + 2):
        if tails.worse <= ALPHA / k:
            out.add("regression")
        elif tails.better <= ALPHA / k:
            out.add("improvement")
        else:
            out.add("likely_regression" if tails.worse <= LIKELY else "no_evidence")
    return out


@pytest.mark.parametrize("baseline", [None, (5, 5), (4, 5), (18, 20), (0, 5), (10, 20)])
def test_a_stopped_case_has_the_verdict_of_every_flat_run_that_began_alike(baseline: tuple[int, int] | None) -> None:
    max_runs, cases = 5, 10
    stopped = 0
    for flat in itertools.product((True, False), repeat=max_runs):
        runs = FIRST_ROUND
        while runs < max_runs:
            done = flat[:runs]
            if decide(sum(done), runs - sum(done), 0, max_runs=max_runs, baseline=baseline, cases=cases).decided:
                break
            runs += 1
        done = flat[:runs]
        assert _label(done) == _label(flat), (baseline, flat, runs)
        if baseline is not None:
            # when stopped early, the tier is the same under any family threshold, and the flat run's
            now, full = _tiers(baseline, done, cases), _tiers(baseline, flat, cases)
            assert runs == max_runs or (len(now) == 1 and now == full), (baseline, flat, runs, now, full)
        stopped += runs < max_runs
    # of the 32 sequences of five runs, those stopped before the fifth: without a baseline all but the four
    # whose first four runs agree; against a baseline fewer, and none against 18 of 20 (a flaky case's last
    # runs can always move it between "no evidence" and "regression")
    assert stopped == {None: 28, (5, 5): 8, (4, 5): 8, (18, 20): 0, (0, 5): 20, (10, 20): 0}[baseline]
