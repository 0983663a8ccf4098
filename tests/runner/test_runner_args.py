import pytest

from agent_evals.runner.run import DEFAULT_CONCURRENCY, concurrency
from agent_evals.suites.discovery import select


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
    with pytest.raises(ValueError, match="unknown suite 'spoke-crate'.*spoke-create, spoke-qa, spoke-create-overlay, integration-qa"):
        select("spoke-crate")
    assert [s.name for s in select("all")] == [
        "spoke-create", "spoke-qa", "spoke-create-overlay", "integration-qa", "release-notes", "spoke-create-variants",
    ]


def test_the_runner_gives_promptfoo_a_worker_timeout_just_above_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_evals.runner.run import _suite_env

    monkeypatch.delenv("REQUEST_TIMEOUT_MS", raising=False)
    monkeypatch.setenv("AGENT_EVALS_DEADLINE_S", "100")
    env = _suite_env(select("spoke-create")[0], "run-x", 4, replay=None, record=None, allow_stale=False)
    assert env["REQUEST_TIMEOUT_MS"] == "135000"
    assert env["PROMPTFOO_DISABLE_ADAPTIVE_SCHEDULER"] == "1" and env["PROMPTFOO_PYTHON_WORKERS"] == "4"
    monkeypatch.setenv("REQUEST_TIMEOUT_MS", "5000")  # the user's own setting wins
    env = _suite_env(select("spoke-create")[0], "run-x", 4, replay=None, record=None, allow_stale=False)
    assert env["REQUEST_TIMEOUT_MS"] == "5000"


def test_the_runners_own_system_pipe_number_is_never_passed_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipe number is only good in the process it was given to (runner/system_handoff.py)."""
    from agent_evals.runner.run import _suite_env

    monkeypatch.setenv("AGENT_EVALS_SYSTEM_FD", "7")
    env = _suite_env(select("spoke-create")[0], "run-x", 4, replay=None, record=None, allow_stale=False)
    assert "AGENT_EVALS_SYSTEM_FD" not in env


def test_python_workers_never_exceed_the_rows_nor_on_a_replay_the_cpus() -> None:
    import os

    from agent_evals.runner.run import python_workers

    assert python_workers(4, 22, replay=False) == 4
    assert python_workers(16, 3, replay=False) == 3  # no idle workers to start
    assert python_workers(4, None, replay=False) == 4
    assert python_workers(8, 22, replay=True) == min(8, os.cpu_count() or 1)
    assert python_workers(1, 0, replay=True) == 1


def test_promptfoo_never_caches_a_conversation_under_the_runner() -> None:
    """Its cache keys a Python provider's answer by the eval id (never a hit) and rewrites its whole
    file after every row; a suite of the user's own that forgot ``evaluateOptions.cache`` is covered too."""
    from agent_evals.runner.promptfoo_process import promptfoo_env

    assert promptfoo_env({"PATH": "/bin"})["PROMPTFOO_CACHE_ENABLED"] == "false"
    assert promptfoo_env({"PATH": "/bin", "PROMPTFOO_CACHE_ENABLED": "true"})["PROMPTFOO_CACHE_ENABLED"] == "false"


def test_promptfoo_reads_a_rows_trace_once() -> None:
    """The provider's spans are stored before it answers (tests/runner/test_traces.py checks that the
    trajectory checks still see every tool call); a user's own setting stays."""
    from agent_evals.runner.promptfoo_process import promptfoo_env

    polls = "PROMPTFOO_TRACE_FETCH_STABLE_POLLS"
    assert promptfoo_env({"PATH": "/bin"})[polls] == "1"
    assert promptfoo_env({"PATH": "/bin", polls: "3"})[polls] == "3"


def test_without_the_preflight_the_runner_still_knows_the_selection() -> None:
    """``--no-check`` skips the preflight's checks, not its selection: Promptfoo gets no more workers
    than the selected rows, and the run's manifest names the cases (the report's completeness)."""
    from agent_evals.runner.run import _selection
    from agent_evals.suites.promptfoo_args import read_flags

    suites = select("spoke-create")
    assert _selection(suites, read_flags(["--filter-pattern", "^C0[12] ", "-j", "8"])) == {"spoke-create": ["C01", "C02"]}
    everything = _selection(suites, read_flags([]))["spoke-create"]
    assert everything is not None and len(everything) == 22 and everything[:2] == ["C01", "C02"]
    assert _selection(suites, read_flags(["--filter-failing", "eval-x"])) == {"spoke-create": None}  # Promptfoo decides
