"""The statistics on constructed cases with known answers: published values where there are
some (Fisher's tea tasting, Newcombe 1998's Wilson and difference intervals), brute-force
enumeration or hand computation elsewhere."""

from __future__ import annotations

import itertools
from math import comb

import pytest

from agent_evals.report.stats import Table, fisher, newcombe, stratified, tarone_bonferroni, wilson


def test_fishers_tea_tasting() -> None:
    # 8 cups, 4 with the milk first; 3 of the lady's 4 "milk first" right: P = 17/70 (Fisher 1935)
    tails = fisher(Table(passed_before=1, runs_before=4, passed_after=3, runs_after=4))
    assert tails.better == pytest.approx(17 / 70) and tails.better == pytest.approx(0.2429, abs=5e-5)
    assert tails.worse == pytest.approx(69 / 70)
    assert tails.least_better == tails.least_worse == pytest.approx(1 / 70)


@pytest.mark.parametrize(
    ("before", "after", "worse"),
    [
        ((5, 5), (0, 5), 1 / 252),  # every run passed, now every run fails
        ((5, 5), (4, 5), 1 / 2),  # one failure in five: no evidence
        ((3, 3), (0, 3), 1 / 20),
        ((3, 3), (1, 3), 4 / 20),
        ((1, 1), (0, 3), 1 / 4),  # one baseline run: never significant
        ((5, 5), (5, 5), 1.0),
    ],
)
def test_fisher_by_hand(before: tuple[int, int], after: tuple[int, int], worse: float) -> None:
    assert fisher(Table(before[0], before[1], after[0], after[1])).worse == pytest.approx(worse)


def test_fisher_equals_enumeration_of_every_table() -> None:
    """P(current passes ≤ c | margins) by counting the ways to draw the current runs."""
    for nb, nc in ((3, 3), (5, 5), (4, 7)):
        for b, c in itertools.product(range(nb + 1), range(nc + 1)):
            k, n = b + c, nb + nc
            ways = [comb(k, x) * comb(n - k, nc - x) for x in range(0, nc + 1)]
            expected = sum(ways[: c + 1]) / comb(n, nc)
            assert fisher(Table(b, nb, c, nc)).worse == pytest.approx(expected)


def test_the_stratified_test_of_one_case_is_fishers() -> None:
    table = Table(9, 10, 4, 10)
    assert stratified([table]) == fisher(table)


def test_the_stratified_test_by_hand_and_by_enumeration() -> None:
    # two cases, each 1 of 1 before and 0 of 1 now: each current pass is 0 or 1 with probability 1/2,
    # so both failing (the sum 0) has probability 1/4
    assert stratified([Table(1, 1, 0, 1), Table(1, 1, 0, 1)]).worse == pytest.approx(0.25)
    tables = [Table(3, 3, 1, 3), Table(2, 4, 2, 3), Table(5, 5, 4, 5)]
    dists = [(t.support, t.distribution()) for t in tables]
    observed = sum(t.passed_after for t in tables)
    worse = sum(
        p1 * p2 * p3
        for (x1, p1), (x2, p2), (x3, p3) in itertools.product(*(zip(s, d, strict=True) for s, d in dists))
        if x1 + x2 + x3 <= observed
    )
    assert stratified(tables).worse == pytest.approx(worse)
    assert stratified([]).worse == 1.0


def test_a_case_that_always_fails_does_not_dilute_one_that_broke() -> None:
    broke = Table(5, 5, 0, 5)
    always_fails = Table(0, 5, 0, 5)
    assert stratified([broke, always_fails]).worse == pytest.approx(fisher(broke).worse)


@pytest.mark.parametrize(
    ("passed", "runs", "low", "high"),
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)],
)
def test_wilson_intervals_of_newcombe_1998(passed: int, runs: int, low: float, high: float) -> None:
    interval = wilson(passed, runs)
    assert interval is not None
    assert interval == pytest.approx((low, high), abs=5e-5)


def test_wilson_without_runs() -> None:
    assert wilson(0, 0) is None


@pytest.mark.parametrize(
    ("after", "before", "low", "high"),
    [
        ((9, 10), (3, 10), 0.1705, 0.8090),
        ((5, 56), (0, 29), -0.0381, 0.1926),
        ((0, 10), (0, 20), -0.1611, 0.2775),
        ((0, 10), (0, 10), -0.2775, 0.2775),
        ((10, 10), (0, 20), 0.6791, 1.0),
        ((10, 10), (0, 10), 0.6075, 1.0),
    ],
)
def test_newcombes_difference_intervals(
    after: tuple[int, int], before: tuple[int, int], low: float, high: float
) -> None:
    """Newcombe (1998), method 10, examples (b) and (d)-(h)."""
    interval = newcombe(Table(before[0], before[1], after[0], after[1]))
    assert interval is not None
    assert interval == pytest.approx((low, high), abs=5e-5)


def test_tarone_counts_only_the_tests_that_could_reach_significance() -> None:
    # two cases could reach 0.05 / 2; the rest (every run passed on both sides: smallest p 1) cannot
    family = tarone_bonferroni([0.004, 0.004, 0.5, 1.0, 1.0], 0.05)
    assert (family.testable, family.threshold) == (2, 0.025)
    assert family.significant(0.004) and not family.significant(0.03)
    plain = tarone_bonferroni([0.001] * 10, 0.05)  # all could: Bonferroni over all ten
    assert (plain.testable, plain.threshold) == (10, 0.005)
    assert tarone_bonferroni([], 0.05).threshold == 0.05
    with pytest.raises(ValueError, match="alpha"):
        tarone_bonferroni([0.1], 1.5)


def test_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="passes must lie"):
        Table(4, 3, 0, 3)
