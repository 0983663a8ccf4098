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
