"""Named moments of a run where a test can stop the runner, to interrupt it exactly there.

A test that must press Ctrl-C "while the portal starts" cannot hit that moment by timing on a
busy machine. With ``AGENT_EVALS_PAUSE_AT=portal-starting`` the runner, on reaching that moment,
prints ``agent-evals paused at portal-starting`` and stops itself (SIGSTOP); the test then sends
its signal (a Ctrl-C through the terminal, a SIGTERM) and lets it go on (SIGCONT): the signal
is handled as if it had arrived at that very instant. A process pauses at each named moment once,
the first time it reaches it: a moment reached again (a portal start retried on another port after
another run took the suite's port) goes by, or nobody would wake the process. Unset, a pause
point costs one dictionary lookup. Names (where they are reached):

- ``preflight``: the run's preflight check is about to start (``runner/run.py``);
- ``promptfoo-starting``: Promptfoo was spawned, the runner does not watch it yet
  (``runner/promptfoo_process.py``); for a suite with the kit's ``beforeAll``, before its system
  starts (``runner/system_handoff.py``), otherwise once the system is ready;
- ``portal-starting``: the portal process was spawned and is starting (``portal/process.py``);
- ``portal-ready``: the suite's portal answers; Promptfoo, started beside it, does not have it yet
  (``runner/run.py``);
- ``cleanup``: Promptfoo is done with the suite, its cleanup is about to start (``runner/run.py``).

Standard library only.
"""

from __future__ import annotations

import os
import signal
import sys

PAUSE_ENV = "AGENT_EVALS_PAUSE_AT"
POINTS = ("preflight", "portal-starting", "portal-ready", "promptfoo-starting", "cleanup")
_paused: set[str] = set()  # the moments this process has paused at


def pause_point(name: str) -> None:
    """Stop this process here if ``AGENT_EVALS_PAUSE_AT`` names ``name`` (comma-separated names)."""
    wanted = os.environ.get(PAUSE_ENV)
    if not wanted or name not in wanted.split(",") or name in _paused:
        return
    _paused.add(name)
    print(f"agent-evals paused at {name}", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)
