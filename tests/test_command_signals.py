"""Ctrl-C and SIGTERM outside a run: one exception that unwinds, and npm's forwarded copy of the
same Ctrl-C does not break the unwinding (a child in a session of its own sends itself the signals)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import os, signal, sys, time
from agent_evals.command_signals import Terminated, stopping

before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)  # as inherited (a parent may ignore SIGINT)

def press():
    os.kill(os.getpid(), signal.SIGINT)

with stopping():
    try:
        press()
        time.sleep(30)
    except KeyboardInterrupt:
        press()  # the same press, forwarded by npm run: ignored while this unwinds
        time.sleep(0.2)
        print("unwound", flush=True)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
    except Terminated:
        print("terminated", flush=True)
print((signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before, flush=True)  # given back
"""


def test_a_press_unwinds_once_and_sigterm_unwinds_too() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60,
                          start_new_session=True)
    assert done.stdout.split() == ["unwound", "terminated", "True"], done.stdout + done.stderr


OVER = """
import os, signal, sys, time
from agent_evals import cli

sys.argv = ["agent-evals", *sys.argv[1:]]
code = cli.main({argv})  # the process's own command line ({argv}) or a caller's list
os.kill(os.getpid(), signal.SIGINT)  # npm run's forwarded copy of the Ctrl-C, late: the command is over
os.kill(os.getpid(), signal.SIGTERM)
time.sleep(0.2)
print("exited", code, flush=True)
"""


def test_a_late_signal_once_the_command_is_over_does_not_change_its_exit() -> None:
    """The process's own command (argv None: the console script, ``python -m``) ignores SIGINT and SIGTERM
    once it is over, so ``npm run`` reports its exit status, not a death by the signal; ``main`` called
    with a list (a caller that goes on) leaves the signals as they were."""
    command = ["report", "/nonexistent/results.json"]  # over at once, through the command's own handling
    own = subprocess.run([sys.executable, "-c", OVER.format(argv="None"), *command],
                         capture_output=True, text=True, timeout=60, start_new_session=True)
    assert (own.returncode, own.stdout.split()) == (0, ["exited", "2"]), own.stdout + own.stderr
    caller = subprocess.run([sys.executable, "-c", OVER.format(argv=repr(command))],
                            capture_output=True, text=True, timeout=60, start_new_session=True)
    assert caller.returncode != 0 and "exited" not in caller.stdout, caller.stdout  # KeyboardInterrupt, as before
