"""Small-count statistics of pass/fail runs, with the standard library only (pure).

A case's runs are a 2×2 table: passes and fails in the baseline and now. At 3 to 5 runs a
side, normal approximations are wrong, so everything here is exact or a score interval:

- :func:`fisher` — Fisher's exact test, one-sided both ways: with the case's total passes
  fixed, the chance that the current runs hold this few passes (``worse``) or this many
  (``better``) if nothing changed. Current passes are then hypergeometric.
- :func:`stratified` — the exact stratified test of several cases at once (a group): each
  case keeps its own margins (so a case that always fails does not dilute one that always
  passed), and the statistic is the sum of current passes, whose exact distribution is the
  convolution of the cases' hypergeometric distributions: the exact conditional test behind
  the Cochran–Mantel–Haenszel test. With one case it is Fisher's test.
- :func:`wilson` — the Wilson score interval of a pass rate (right coverage at small n,
  never outside [0, 1]); :func:`newcombe` — Newcombe's hybrid score interval of the
  difference of two rates (method 10 of Newcombe 1998), from the two Wilson intervals.
- :func:`tarone_bonferroni` — family-wise significance over many cases: Bonferroni over the
  cases that *could* reach it (Tarone 1990). A case whose most extreme possible outcome,
  given its margins, could not be significant (every run passed on both sides, say) is
  not counted, so 50 cases that mostly always pass do not dilute the one that broke.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb, sqrt

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


@dataclass(frozen=True)
class Table:
    """One case's runs: passes and graded runs in the baseline and now."""

    passed_before: int
    runs_before: int
    passed_after: int
    runs_after: int

    def __post_init__(self) -> None:
        if not (0 <= self.passed_before <= self.runs_before and 0 <= self.passed_after <= self.runs_after):
            raise ValueError(f"passes must lie between 0 and the runs: {self}")

    @property
    def passes(self) -> int:
        return self.passed_before + self.passed_after

    @property
    def support(self) -> range:
        """The current passes possible with these margins."""
        return range(max(0, self.passes - self.runs_before), min(self.runs_after, self.passes) + 1)

    def distribution(self) -> list[float]:
        """P(current passes = x) for x in :attr:`support`, if nothing changed (hypergeometric)."""
        total = comb(self.runs_before + self.runs_after, self.runs_after)
        fails = self.runs_before + self.runs_after - self.passes
        return [comb(self.passes, x) * comb(fails, self.runs_after - x) / total for x in self.support]


@dataclass(frozen=True)
class Tails:
    """One-sided p-values: current this bad or worse (``worse``), this good or better (``better``),
    and the smallest ``worse`` the margins allow (every current run failing)."""

    worse: float
    better: float
    least_worse: float
    least_better: float


def fisher(table: Table) -> Tails:
    """Fisher's exact test of one case, one-sided both ways."""
    return stratified([table])


def stratified(tables: Sequence[Table]) -> Tails:
    """The exact stratified test of several cases (the sum of current passes, each case's margins fixed)."""
    if not tables:
        return Tails(1.0, 1.0, 1.0, 1.0)
    low, pmf = 0, [1.0]
    observed = 0
    for table in tables:
        low, pmf = low + table.support.start, _convolve(pmf, table.distribution())
        observed += table.passed_after
    at = observed - low
    worse, better = sum(pmf[: at + 1]), sum(pmf[at:])
    return Tails(_p(worse), _p(better), _p(pmf[0]), _p(pmf[-1]))


def _convolve(a: Sequence[float], b: Sequence[float]) -> list[float]:
    out = [0.0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def _p(value: float) -> float:
    return min(1.0, max(0.0, value))


def wilson(passed: int, runs: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of ``passed / runs`` (None without a run)."""
    if runs <= 0:
        return None
    rate, z2 = passed / runs, z * z
    centre = (rate + z2 / (2 * runs)) / (1 + z2 / runs)
    half = z * sqrt(rate * (1 - rate) / runs + z2 / (4 * runs * runs)) / (1 + z2 / runs)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe(table: Table, z: float = Z95) -> tuple[float, float] | None:
    """Newcombe's hybrid score interval of (rate now − rate before); None when a side has no run."""
    before = wilson(table.passed_before, table.runs_before, z)
    after = wilson(table.passed_after, table.runs_after, z)
    if before is None or after is None:
        return None
    p1, (l1, u1) = table.passed_after / table.runs_after, after
    p2, (l2, u2) = table.passed_before / table.runs_before, before
    diff = p1 - p2
    low = diff - sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = diff + sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(-1.0, low), min(1.0, high)


@dataclass(frozen=True)
class Family:
    """Tarone–Bonferroni over a family of one-sided tests: the threshold each p-value must meet."""

    alpha: float
    testable: int  # K: the hypotheses that could reach alpha / K
    threshold: float  # alpha / K

    def significant(self, p: float) -> bool:
        return p <= self.threshold + 1e-15


def tarone_bonferroni(least_p: Sequence[float], alpha: float) -> Family:
    """The family's threshold from each test's smallest achievable p-value (Tarone 1990): the
    smallest K such that at most K tests could reach ``alpha / K``."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie between 0 and 1, got {alpha}")
    for k in range(1, len(least_p) + 1):
        if sum(1 for p in least_p if p <= alpha / k + 1e-15) <= k:
            return Family(alpha, k, alpha / k)
    return Family(alpha, max(1, len(least_p)), alpha / max(1, len(least_p)))
