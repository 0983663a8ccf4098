"""How a command of the kit stops on Ctrl-C or SIGTERM outside a run's own handling (the
preflight, ``cleanup``, ``report``…; a run installs :class:`agent_evals.runner.interrupts.Interrupts`
over these): one line and exit 130 (143), with every ``finally`` and ``with`` on the way run.

A Ctrl-C raises ``KeyboardInterrupt``; a SIGTERM raises :class:`Terminated`, which unwinds the
same way instead of killing the process where it stands (a lock held, a portal started). A
second SIGINT within :data:`SAME_PRESS_S` of the first is the same press (``npm run`` forwards
the terminal's Ctrl-C to its child once more): it is ignored, so it cannot break the unwinding
of the first (a portal left running, its log left behind). A later one raises again.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from agent_evals.runner.interrupts import SAME_PRESS_S

__all__ = ["Terminated", "stopping"]


class Terminated(BaseException):
    """SIGTERM outside a run's own handling: unwinds like Ctrl-C (finally blocks run, locks go)."""


@contextmanager
def stopping() -> Iterator[None]:
    """The handlers above for the duration (main thread only; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[float] = []

    def interrupt(signum: int, frame: FrameType | None) -> None:
        now = time.monotonic()
        if pressed and now - pressed[-1] < SAME_PRESS_S:
            return  # the same Ctrl-C, forwarded once more
        pressed.append(now)
        raise KeyboardInterrupt

    def terminate(signum: int, frame: FrameType | None) -> None:
        raise Terminated

    previous = {sig: signal.signal(sig, handler) for sig, handler in ((signal.SIGINT, interrupt),
                                                                       (signal.SIGTERM, terminate))}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
