"""Progress on a terminal: a status line under the case lines (n/N done, running, an estimate); a pipe or a
log gets the plain lines only."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from agent_evals.runner.console import SuiteCounts
from agent_evals.runner.progress import Progress, clock, rough
from agent_evals.runner.suite_output import ERASE, OrderedOutput
from tests.conftest import PROJECT_ROOT, clean_env

from .terminal import Terminal


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_line_says_how_far_the_run_is_and_how_long_is_left() -> None:
    time = Clock()
    progress = Progress({"spoke-create": 22, "spoke-qa": 4}, clock=time)
    assert progress.line() == "0/26 done · 0 running · 0s · estimate after the first case"
    counts = SuiteCounts()
    time.now += 5  # the portal starts
    progress.started("spoke-create", workers=4)
    progress.follow("spoke-create", lambda: counts.total)
    time.now += 60
    assert progress.line() == "0/26 done · 4 running (spoke-create) · 1m05s · estimate after the first case"
    counts.passed, counts.failed = 10, 3  # 13 rows in 120 s since they began: 13 left, at that pace 2 min
    time.now += 60
    assert progress.line() == "13/26 done · 4 running (spoke-create) · 2m05s · about 2 min left"
    counts.passed = 19  # its 22 rows are done (it cleans up): no longer running rows
    assert progress.line().startswith("22/26 done · 0 running · ")
    progress.finished("spoke-create")
    counts.passed = 99  # a finished suite's count no longer moves
    assert progress.line().startswith("22/26 done · 0 running · ")


def test_a_status_line_is_erased_before_each_line_and_drawn_again_after() -> None:
    real = io.StringIO()
    output = OrderedOutput(real, ["a", "b"], status=lambda: "1/2 done")
    with output.suite("a"):
        output.write("  C01    PASS     1.0s\n")
    output.close_status()
    assert real.getvalue() == f"  C01    PASS     1.0s\n{ERASE}1/2 done{ERASE}"


def test_without_a_status_line_the_output_is_the_plain_lines() -> None:
    real = io.StringIO()
    output = OrderedOutput(real, ["a"])
    with output.suite("a"):
        output.write("  C01    PASS     1.0s\n")
    output.redraw()
    output.close_status()
    assert real.getvalue() == "  C01    PASS     1.0s\n"


def test_clock_and_rough() -> None:
    assert [clock(s) for s in (5, 65, 3725)] == ["5s", "1m05s", "1h02m"]
    assert [rough(s) for s in (3, 42, 150, 5400)] == ["5 s", "40 s", "2 min", "1.5 h"]


@pytest.mark.skipif(not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(),
                    reason="npm packages not installed")
def test_a_run_in_a_terminal_shows_its_progress_before_the_first_case_ends(tmp_path: Path) -> None:
    env = {**clean_env(), "AGENT_EVALS_DATA_DIR": str(tmp_path / "data" / "portal"),
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / "pf"), "COLUMNS": "200"}
    terminal = Terminal(["npm", "run", "eval", "--", "spoke-qa", "--replay"], env=env, cwd=PROJECT_ROOT)
    terminal.wait_for(lambda: terminal.process.poll() is not None, 300, "the run's end")
    said = terminal.output
    assert terminal.process.returncode == 0, said[-3000:]
    first_case = said.index("  Q0")
    statuses = re.findall(r"\r\x1b\[K(\d+/4 done · [^\r\n]*?)(?=\r|\n|$)", said)
    assert statuses and statuses[0].startswith("0/4 done")  # before any case ended
    assert said.index("0/4 done") < first_case
    assert any(s.startswith("4/4 done") for s in statuses)
    lines = [re.sub(r".*\r\x1b\[K", "", line) for line in said.split("\n")]  # what the terminal shows
    assert sum(1 for line in lines if re.fullmatch(r"  Q0\d +PASS +\d+\.\ds +\(1 not graded\)", line)) == 4
