"""Ctrl-C and SIGTERM during a run: the first one stops Promptfoo gracefully and lets the
runner clean up; a second one forces the exit.

A terminal's Ctrl-C goes to the whole foreground process group. Promptfoo and the portal
run in sessions of their own, so only the runner gets it (``npm run`` forwards it once more:
a signal within a second of the first is the same press), and the runner decides: it
forwards exactly one SIGINT to Promptfoo (which then saves what finished and stops its
workers), waits for it, undoes the run through its systems (the portal, still running,
abandons the run's pull requests; the release pack removes its working copies: the line says
which, from ``System.undo_words``), marks the eval interrupted, stops the systems and exits 130
(143 for SIGTERM).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any, Self

HANDLED = (signal.SIGINT, signal.SIGTERM)
GRACE_S = 15.0  # Promptfoo stops within about a second; after this it is killed
CLEANING_UP = "cleaning up this run"  # what the first press says comes next when the systems undo nothing
SAME_PRESS_S = 1.0  # signals this close to the first are the same press (npm run forwards it again)


class ForcedExit(BaseException):
    """A second Ctrl-C or SIGTERM: stop now."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Interrupts:
    """Installs the handlers for the duration of a run (main thread only)."""

    def __init__(self, undo_words: str = CLEANING_UP) -> None:
        self.undo_words = undo_words  # the systems' (runner.systems.undo_words), said after the first press
        self.signum: int | None = None
        self.count = 0
        self.children: set[subprocess.Popen[bytes]] = set()  # the Promptfoo processes running (one per suite)
        self.on_first: list[Callable[[], None]] = []  # e.g. quiet Promptfoo's shutdown noise
        self._previous: dict[int, Callable[[int, FrameType | None], Any] | int | None] = {}  # as signal.signal gives
        self._first_at = 0.0

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @property
    def exit_code(self) -> int:
        return 128 + (self.signum or signal.SIGINT)

    def __enter__(self) -> Self:
        for sig in HANDLED:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum: int, _: FrameType | None) -> None:
        now = time.monotonic()
        if self.signum is not None and now - self._first_at < SAME_PRESS_S:
            return  # the same Ctrl-C, forwarded once more (npm run forwards the terminal's SIGINT)
        self.count += 1
        if self.count > 1:
            raise ForcedExit(signum)
        self.signum = signum
        self._first_at = now
        name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        print(f"\n{name}: stopping Promptfoo, then {self.undo_words} "
              "(press Ctrl-C again to force the exit)", file=sys.stderr, flush=True)
        for quiet in list(self.on_first):
            quiet()
        self.stop_children()

    def started(self, child: subprocess.Popen[bytes]) -> None:
        """A Promptfoo process began (a suite's thread); one that starts after the first Ctrl-C stops at once."""
        self.children.add(child)
        if self.requested:
            self._stop(child)

    def ended(self, child: subprocess.Popen[bytes]) -> None:
        self.children.discard(child)

    def stop_children(self) -> None:
        for child in list(self.children):
            self._stop(child)

    def kill_children(self) -> None:
        """A forced exit: no Promptfoo process outlives the runner."""
        for child in list(self.children):
            _kill(child)

    @staticmethod
    def _stop(child: subprocess.Popen[bytes]) -> None:
        if child.poll() is None:
            child.send_signal(signal.SIGINT)  # Promptfoo pauses: finished rows stay saved, workers stop
            timer = threading.Timer(GRACE_S, _kill, (child,))
            timer.daemon = True
            timer.start()


def _kill(child: subprocess.Popen[bytes]) -> None:
    if child.poll() is None:
        child.kill()
