"""pass^k: the chance that k runs of a case, drawn from its n graded runs, all pass (pure).

With c passes in n runs the unbiased estimator is C(c, k) / C(n, k) (τ-bench's
``pass_hat_k``). By default k = n, so pass^k is 1 only when every run passed. Errors are
not runs of the agent: they are left out of n.
"""

from __future__ import annotations

from math import comb


def pass_hat_k(n: int, c: int, k: int | None = None) -> float | None:
    """C(c, k) / C(n, k); ``k`` None means k = n. None when there are fewer than k runs (or none)."""
    if not 0 <= c <= n:
        raise ValueError(f"passes must be between 0 and the runs: {c} of {n}")
    k = n if k is None else k
    if k < 1 or n < k:
        return None
    return comb(c, k) / comb(n, k)


def is_flaky(passed: int, failed: int) -> bool:
    """Some runs passed and some failed."""
    return passed > 0 and failed > 0
