"""``--shard I/N`` and the shard plan: every case on exactly one shard, all repeats of a test
together (a test is the unit), balanced by count or by durations, the same on every machine."""

from __future__ import annotations


import pytest

from agent_evals.shards.plan import PlannedCase, plan_shards
from agent_evals.suites.shard_spec import Shard, ShardError, parse_shard, shard_path


def test_a_shard_is_i_of_n() -> None:
    shard = parse_shard("2/4")
    assert (shard.index, shard.total, str(shard), shard.name) == (2, 4, "2/4", "shard-2-of-4")
    assert parse_shard(" 1 / 1 ") == Shard(1, 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3/2", "--shard 3/2: shard 3 is above the shard count 2 (shards are numbered 1 to 2)"),
        ("0/4", "--shard 0/4: shards are numbered from 1 (1/4 to 4/4)"),
        ("1/0", "--shard 1/0: the shard count must be from 1 to 1000"),
        ("2", "--shard '2': expected I/N, e.g. 2/4 (shard 2 of 4)"),
        ("a/b", "--shard 'a/b': expected I/N, e.g. 2/4 (shard 2 of 4)"),
        ("-1/4", "--shard '-1/4': expected I/N, e.g. 2/4 (shard 2 of 4)"),
        ("", "--shard '': expected I/N, e.g. 2/4 (shard 2 of 4)"),
    ],
)
def test_a_bad_shard_is_one_line_saying_what_is_allowed(text: str, message: str) -> None:
    with pytest.raises(ShardError) as caught:
        parse_shard(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("results/tickets.json", "results/tickets.shard-2-of-4.json"),
        ("/abs/out.json", "/abs/out.shard-2-of-4.json"),
        ("out", "out.shard-2-of-4"),
        ("a.b/report.junit.xml", "a.b/report.junit.shard-2-of-4.xml"),
    ],
)
def test_results_files_are_named_for_their_shard(path: str, named: str) -> None:
    assert shard_path(path, Shard(2, 4)) == named


def _cases(*ids: str) -> list[PlannedCase]:
    return [PlannedCase(i, f"{i} description") for i in ids]


CASES = _cases(*(f"C{n:02d}" for n in range(1, 23)))  # 22 cases, as spoke-create


@pytest.mark.parametrize("total", [1, 2, 3, 4, 7, 22, 30])
def test_every_case_runs_on_exactly_one_shard_and_counts_differ_by_one_at_most(total: int) -> None:
    plan = plan_shards(CASES, total)
    assert len(plan) == total
    assert sorted(p for shard in plan for p in shard) == list(range(len(CASES)))
    sizes = [len(shard) for shard in plan]
    assert max(sizes) - min(sizes) <= 1
    assert all(shard == sorted(shard) for shard in plan)  # each shard in suite order
    assert plan == plan_shards(list(CASES), total)  # the same on every machine


def test_round_robin_mixes_the_groups() -> None:
    assert plan_shards(CASES[:8], 4) == [[0, 4], [1, 5], [2, 6], [3, 7]]


def test_tests_sharing_a_description_stay_together() -> None:
    cases = [PlannedCase("A", "same"), PlannedCase("B", "other"), PlannedCase("C", "same")]
    plan = plan_shards(cases, 2)
    assert plan == [[0, 2], [1]]


def test_durations_put_the_longest_first_on_the_least_loaded_shard() -> None:
    cases = _cases("C1", "C2", "C3", "C4", "C5")
    durations = {"C1": 10.0, "C2": 1.0, "C3": 9.0, "C4": 2.0, "C5": 8.0}
    plan = plan_shards(cases, 2, durations)
    loads = [sum(durations[cases[p].id] for p in shard) for shard in plan]
    assert plan == [[0, 1, 3], [2, 4]] and loads == [13.0, 17.0]
    by_count = plan_shards(cases, 2)
    assert [sum(durations[cases[p].id] for p in s) for s in by_count] == [27.0, 3.0]  # what durations avoid


def test_a_case_the_durations_do_not_know_counts_as_their_mean() -> None:
    cases = _cases("C1", "C2", "NEW")
    plan = plan_shards(cases, 2, {"C1": 4.0, "C2": 2.0})  # NEW counts as 3
    assert plan == [[0], [1, 2]]
