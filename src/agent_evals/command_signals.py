"""How a command of the kit stops on Ctrl-C or SIGTERM outside a run's own handling (the
preflight, ``cleanup``, ``report``…; a run installs :class:`agent_evals.runner.interrupts.Interrupts`
over these): one line and exit 130 (143), with every ``finally`` and ``with`` on the way run.

A Ctrl-C raises ``KeyboardInterrupt``; a SIGTERM raises :class:`Terminated`, which unwinds the
same way instead of killing the process where it stands (a lock held, a portal started). A
second SIGINT within :data:`SAME_PRESS_S` of the first is the same press (``npm run`` forwards
the terminal's Ctrl-C to its child once more): it is ignored, so it cannot break the unwinding
of the first (a portal left running, its log left behind). A later one raises again.

Once the process's own command is over (``stopping(then_ignore=True)``), SIGINT and SIGTERM are
ignored for the rest of the process's exit: ``npm run``'s forwarded copy of a Ctrl-C can come that
late on a busy machine, and a Python that is shutting down dies of it (its handler is gone by then),
which ``npm`` then reports as its own death by SIGINT instead of the command's exit status 130.
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
def stopping(*, then_ignore: bool = False) -> Iterator[None]:
    """The handlers above for the duration (main thread only; elsewhere nothing changes). After it the
    previous handlers are given back, or, ``then_ignore`` (the process's own command is over and only
    exits now), both signals are ignored: never for a caller that goes on (a test calling ``main``)."""
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
            signal.signal(sig, signal.SIG_IGN if then_ignore else handler)
