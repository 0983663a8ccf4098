"""``pid_alive``: what the sweeps and the data-dir lock ask of a recorded process id."""

from __future__ import annotations

import subprocess
import sys
import time

from agent_evals.portal.serving import pid_alive


def test_a_running_process_is_alive_and_a_dead_unreaped_one_is_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert pid_alive(child.pid)
        child.kill()
        deadline = time.monotonic() + 10
        while pid_alive(child.pid) and time.monotonic() < deadline:  # a zombie until reaped below
            time.sleep(0.02)
        assert not pid_alive(child.pid)
        with open(f"/proc/{child.pid}/stat", encoding="ascii") as stat:
            assert stat.read().rsplit(")", 1)[1].split()[0] == "Z"  # not reaped yet: still listed
    finally:
        child.kill()
        child.wait()
    assert not pid_alive(child.pid)
