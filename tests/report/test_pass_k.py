"""pass^k: C(c, k) / C(n, k), k = n by default; flaky = some passed, some failed."""

from __future__ import annotations

import pytest

from agent_evals.report.pass_k import is_flaky, pass_hat_k


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (4, 4, None, 1.0),  # k = n: every run passed
        (4, 3, None, 0.0),  # k = n: one failure is enough
        (4, 2, None, 0.0),
        (1, 1, None, 1.0),
        (4, 2, 1, 0.5),  # pass^1 is the pass rate
        (4, 2, 2, 1 / 6),  # C(2,2)/C(4,2)
        (5, 4, 2, 6 / 10),  # C(4,2)/C(5,2)
        (5, 4, 3, 4 / 10),  # C(4,3)/C(5,3)
        (3, 0, 1, 0.0),
        (3, 3, 2, 1.0),
        (2, 2, 3, None),  # fewer runs than k: no estimate
        (0, 0, None, None),  # no graded run
        (0, 0, 1, None),
    ],
)
def test_pass_hat_k(n: int, c: int, k: int | None, expected: float | None) -> None:
    got = pass_hat_k(n, c, k)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_more_passes_than_runs_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and the runs: 5 of 4"):
        pass_hat_k(4, 5)


@pytest.mark.parametrize(
    ("passed", "failed", "flaky"), [(2, 2, True), (1, 3, True), (4, 0, False), (0, 4, False), (0, 0, False)]
)
def test_flaky_means_some_passed_and_some_failed(passed: int, failed: int, flaky: bool) -> None:
    assert is_flaky(passed, failed) is flaky
