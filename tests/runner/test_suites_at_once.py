"""Suites side by side (``--suites-at-once``): each suite's lines together in the suites' order,
never more at once than asked, never two with the same trace receiver, and a run's Ctrl-C still
stops them all and leaves no pull request."""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agent_evals.runner.run import Lanes, default_suites_at_once, run
from agent_evals.runner.suite_output import OrderedOutput


def test_a_later_suite_waits_its_turn_to_print_then_catches_up() -> None:
    terminal = io.StringIO()
    output = OrderedOutput(terminal, ["a", "b", "c"])
    b_wrote, a_may_finish = threading.Event(), threading.Event()

    def suite(name: str, lines: list[str], before_end: threading.Event | None = None,
              after: threading.Event | None = None) -> None:
        with output.suite(name):
            for line in lines:
                output.write(line)
            if after is not None:
                after.set()
            if before_end is not None:
                before_end.wait(10)

    a = threading.Thread(target=suite, args=("a", ["a1\n"], a_may_finish))
    b = threading.Thread(target=suite, args=("b", ["b1\n", "b2\n"], None, b_wrote))
    a.start()
    b.start()
    assert b_wrote.wait(10)
    b.join(10)
    assert terminal.getvalue() == "a1\n"  # b is done, but a is still the head: b's lines wait
    output.write("from the main thread\n")  # not a suite's: at once
    a_may_finish.set()
    a.join(10)
    assert terminal.getvalue() == "a1\nfrom the main thread\nb1\nb2\n"
    with output.suite("c"):  # the head now: live
        output.write("c1\n")
        assert terminal.getvalue().endswith("c1\n")


def _hold(release: threading.Event, began: threading.Event) -> int:
    began.set()
    release.wait(10)
    return 0


def test_lanes_run_up_to_at_once() -> None:
    lanes = Lanes(2)
    release = {name: threading.Event() for name in "ab"}
    began = {name: threading.Event() for name in "ab"}
    lanes.wait_for_room()
    lanes.start("a", lambda: _hold(release["a"], began["a"]), began["a"])
    lanes.wait_for_room()  # room for a second one
    lanes.start("b", lambda: _hold(release["b"], began["b"]), began["b"])
    waited = threading.Event()

    def third() -> None:
        lanes.wait_for_room()  # two run
        waited.set()

    waiter = threading.Thread(target=third)
    waiter.start()
    assert not waited.wait(0.3)  # no room while both run
    release["b"].set()
    waiter.join(10)
    assert waited.is_set()
    release["a"].set()
    lanes.wait_all()
    assert lanes.codes == {"a": 0, "b": 0} and lanes.failure is None


def test_a_suite_that_raises_is_handed_to_the_run() -> None:
    lanes = Lanes(2)
    began = threading.Event()

    def broken() -> int:
        raise RuntimeError("boom")

    lanes.start("a", broken, began)
    lanes.wait_all()
    assert isinstance(lanes.failure, RuntimeError) and began.is_set()


def test_three_at_once_on_a_replay_one_against_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert default_suites_at_once(replay=True) == 3
    assert default_suites_at_once(replay=False) == 1
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert default_suites_at_once(replay=True) == 1


def test_suites_at_once_below_one_is_refused(isolated: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert run("all", "golden", None, [], suites_at_once=0) == 2
    assert "--suites-at-once must be 1 or more" in caplog.text


class HeldOnceAPullRequestIsActive:
    """The golden plans of spoke-create and spoke-qa played live. spoke-qa's first request waits for
    spoke-create's first pull request; from then on every request is held until the test lets go:
    two suites running and a pull request active, however loaded the machine (no timing)."""

    def __init__(self, data: Path) -> None:
        from agent_evals.golden.record import build_scripts
        from agent_evals.suites.discovery import select
        from agent_evals.testing.conversations import ScriptedConversations

        self.data = data
        self.qa_keys = [s.key for s in build_scripts(select("spoke-qa")[0])]
        self.scripts = ScriptedConversations([*build_scripts(select("spoke-create")[0]),
                                              *build_scripts(select("spoke-qa")[0])])
        self.held = threading.Event()
        self.release = threading.Event()

    def _pull_request_active(self) -> bool:
        from tests.runner.terminal import pull_requests

        return bool(pull_requests(self.data))

    def __call__(self, request: Any) -> Any:
        if request.max_tokens != 1:  # not the preflight's ping
            is_qa = any(key in json.dumps(request.messages) for key in self.qa_keys)
            deadline = time.monotonic() + 60
            while is_qa and not self._pull_request_active() and time.monotonic() < deadline:
                time.sleep(0.05)
            if self._pull_request_active():
                self.held.set()
                self.release.wait(60)
        return self.scripts(request)


def test_ctrl_c_with_two_suites_running_stops_both_and_leaves_no_pull_request(tmp_path: Path) -> None:
    import subprocess
    import sys

    from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
    from tests.conftest import PROJECT_ROOT
    from tests.leftovers import processes_with
    from tests.runner.terminal import RUN_MARK, Terminal, pull_requests, runner_env

    data = tmp_path / "data" / "portal"
    models = HeldOnceAPullRequestIsActive(data)

    def evals_running(env: dict[str, str]) -> int:
        return len([line for line in processes_with(RUN_MARK, env[RUN_MARK])
                    if f"promptfoo eval -c {PROJECT_ROOT}/evals/" in line])

    # One case of each of three suites: spoke-create and spoke-qa side by side, then the variants,
    # which must never start; live, so that the responder holds the moment (a replay is over too soon).
    with ScriptedOpenAIServer(models) as server:
        env = runner_env(tmp_path, server.base_url)
        terminal = Terminal([sys.executable, "-m", "agent_evals.cli", "run", "all", "--suites-at-once", "2", "--no-check",
                             "--filter-pattern", "^(C01|Q01|V01) "], env=env, cwd=PROJECT_ROOT)
        try:
            terminal.wait_for(lambda: models.held.is_set() and evals_running(env) == 2 and pull_requests(data), 120,
                              "two suites running, and a PR")
            terminal.ctrl_c()
        finally:
            models.release.set()
        code = terminal.wait(timeout=60)
    output = terminal.output
    assert code == 130, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    assert "=== suite spoke-create-variants" not in output, output[-3000:]  # nothing starts after Ctrl-C
    assert pull_requests(data) == [] and pull_requests(data.parent / "portal-spoke-create-overlay") == []
    assert evals_running(env) == 0
    gone = subprocess.run(["pgrep", "-f", f"portal serve .*--data-dir {data}"], capture_output=True, text=True)
    assert gone.stdout.strip() == ""
