"""A pause point stops the process the first time it reaches its moment, and only then: a moment
reached again (a portal start retried on another port) must not stop a process nobody will wake."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from agent_evals.testing.pause_points import PAUSE_ENV
from tests.runner.terminal import is_stopped

TWICE = (
    "from agent_evals.testing.pause_points import pause_point\n"
    "pause_point('portal-starting'); print('went on', flush=True)\n"
    "pause_point('portal-starting'); print('went on again', flush=True)\n"
)


def test_a_moment_reached_twice_pauses_once() -> None:
    child = subprocess.Popen([sys.executable, "-c", TWICE], env={**os.environ, PAUSE_ENV: "portal-starting"},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not is_stopped(child.pid):  # the first time: stopped, as the tests need
            assert child.poll() is None and time.monotonic() < deadline, child.communicate()
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGCONT)
        out, err = child.communicate(timeout=60)  # the second time goes by
    finally:
        child.kill()
    assert child.returncode == 0, err
    assert out.splitlines() == ["went on", "went on again"]
    assert err.count("agent-evals paused at portal-starting") == 1


def test_a_moment_not_named_goes_by() -> None:
    done = subprocess.run([sys.executable, "-c", TWICE], env={**os.environ, PAUSE_ENV: "cleanup"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "paused" not in done.stderr, done.stderr
