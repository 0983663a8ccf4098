"""Progress of a run on a terminal: one status line under the case lines, redrawn as rows end.

    12/90 done · 4 running (tickets-create, tickets-qa) · 1m05s · about 3 min left

A run against a real model prints nothing for about a minute before its first case ends, and
with suites side by side a later suite's lines wait until the suites before it are done
(``suite_output``); the status line says meanwhile how far the whole run is. It is drawn only
when the output is a terminal (``\\r`` and erase-line), redrawn every second for the clock and
whenever a case line is printed above it, and erased at the end: a log or a pipe gets the plain
lines only, as before. The estimate is the rows left at the pace of the rows done so far.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

TICK_S = 1.0


@dataclass
class _Suite:
    """One suite's share of the run."""

    total: int | None  # rows to run (cases × providers × repeats); None when unknown ahead
    workers: int = 0
    done_count: Callable[[], int] | None = None  # the suite's rows done, read when the line is drawn
    ended: int = 0
    running: bool = False
    finished: bool = False


class Progress:
    """How far a run is, over all its suites (thread-safe: suites report from their own threads)."""

    def __init__(self, totals: Mapping[str, int | None], clock: Callable[[], float] = time.monotonic) -> None:
        self._suites = {name: _Suite(total) for name, total in totals.items()}
        self._clock = clock
        self._started = clock()
        self._rows_since: float | None = None  # when the first suite started running rows: the pace's start
        self._lock = threading.Lock()

    def started(self, suite: str, workers: int) -> None:
        with self._lock:
            entry = self._suites.setdefault(suite, _Suite(None))
            entry.workers, entry.running = workers, True
            if self._rows_since is None:
                self._rows_since = self._clock()

    def follow(self, suite: str, done: Callable[[], int]) -> None:
        """Read the suite's rows done from ``done`` (its console's count) whenever the line is drawn."""
        with self._lock:
            self._suites.setdefault(suite, _Suite(None)).done_count = done

    def finished(self, suite: str) -> None:
        with self._lock:
            entry = self._suites.setdefault(suite, _Suite(None))
            entry.ended = _done(entry)
            entry.running, entry.finished, entry.done_count = False, True, None
            if entry.total is None or entry.ended > entry.total:
                entry.total = entry.ended

    def line(self) -> str:
        """``12/90 done · 4 running (tickets-create, tickets-qa) · 1m05s · about 3 min left``."""
        with self._lock:
            suites = [(name, s, _done(s)) for name, s in self._suites.items()]
        done = sum(d for _, _, d in suites)
        known = all(s.total is not None for _, s, _ in suites)
        total = sum(s.total or 0 for _, s, _ in suites) if known else None
        now = self._clock()
        rows = {name: min(s.workers, max((s.total if s.total is not None else d + s.workers) - d, 0))
                for name, s, d in suites if s.running}
        running = sum(rows.values())
        busy = [name for name, count in rows.items() if count]
        parts = [f"{done}/{total if total is not None else '?'} done"]
        parts.append(f"{running} running" + (f" ({', '.join(busy)})" if busy else ""))
        parts.append(clock(now - self._started))
        if done and total is not None and total > done:
            pace = (now - (self._rows_since if self._rows_since is not None else self._started)) / done
            parts.append(f"about {rough(pace * (total - done))} left")
        elif not done:
            parts.append("estimate after the first case")
        return " · ".join(parts)


def _done(suite: _Suite) -> int:
    return suite.done_count() if suite.done_count is not None else suite.ended


def clock(seconds: float) -> str:
    """``45s``, ``1m05s``, ``1h02m``."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def rough(seconds: float) -> str:
    """``20 s``, ``3 min``, ``1.5 h``: an estimate, said as one."""
    if seconds < 60:
        return f"{max(5, round(seconds / 5) * 5)} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


class Ticker:
    """Calls ``redraw`` every ``TICK_S`` until stopped (for the status line's clock)."""

    def __init__(self, redraw: Callable[[], None]) -> None:
        self._redraw = redraw
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="progress", daemon=True)

    def __enter__(self) -> Ticker:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(TICK_S):
            self._redraw()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
