import pytest

from agent_evals.runner.run import DEFAULT_CONCURRENCY, concurrency
from agent_evals.runner.suites import select


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], DEFAULT_CONCURRENCY),
        (["-j", "8"], 8),
        (["--filter-pattern", "C01", "-j8"], 8),
        (["--max-concurrency=2"], 2),
        (["--max-concurrency", "3", "-o", "x.json"], 3),
        (["-j", "many"], DEFAULT_CONCURRENCY),
    ],
)
def test_the_python_worker_count_follows_the_concurrency(args: list[str], expected: int) -> None:
    assert concurrency(args) == expected


def test_unknown_suites_are_named_with_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown suite 'spoke-crate'.*spoke-create, spoke-qa, spoke-create-overlay"):
        select("spoke-crate")
    assert [s.name for s in select("all")] == ["spoke-create", "spoke-qa", "spoke-create-overlay"]
