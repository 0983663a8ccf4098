"""The terminal of suites that run at once: each suite's lines together, in the suites' order.

While it is installed, ``sys.stdout`` is an :class:`OrderedOutput`. What a suite's thread prints
goes to the terminal as it comes when that suite is the first one not finished (the *head*);
a later suite's lines wait in its buffer until every suite before it has finished, then come
out at once and it goes on live. Anything else (the main thread) prints at once. The output is
the same as if the suites had run one after the other, only sooner.

On a terminal it can keep a status line under what is printed (``status``: the run's progress,
``runner.progress``): erased before a line is written, drawn again after, and erased at the end.
"""

from __future__ import annotations

import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any


ERASE = "\r\x1b[K"  # back to the line's start, erase it


class OrderedOutput:
    def __init__(self, real: IO[str], order: list[str], status: Callable[[], str] | None = None) -> None:
        self._real = real
        self._status = status  # the status line's text (None: no status line, e.g. not a terminal)
        self._shown = False
        self._order = list(order)
        self._buffers: dict[str, list[str]] = {name: [] for name in order}
        self._done: set[str] = set()
        self._head = 0
        self._lock = threading.Lock()
        self._local = threading.local()

    @contextmanager
    def suite(self, name: str) -> Iterator[None]:
        """What the calling thread prints inside belongs to suite ``name``; it is finished at the end."""
        self._local.suite = name
        try:
            yield
        finally:
            self._local.suite = None
            self._finish(name)

    def write(self, text: str) -> int:
        name = getattr(self._local, "suite", None)
        with self._lock:
            if name is None or self._is_head(name):
                self._out(text)
            else:
                self._buffers[name].append(text)
        return len(text)

    def redraw(self) -> None:
        """Draw the status line again (its clock moved, a row ended)."""
        with self._lock:
            self._draw()

    def close_status(self) -> None:
        with self._lock:
            self._erase()
            self._status = None
            self._real.flush()

    def _out(self, text: str) -> None:
        self._erase()
        self._real.write(text)
        if text.endswith("\n"):
            self._draw()

    def _erase(self) -> None:
        if self._shown:
            self._real.write(ERASE)
            self._shown = False

    def _draw(self) -> None:
        if self._status is None:
            return
        width = shutil.get_terminal_size((100, 24)).columns - 1
        line = self._status()
        self._real.write(ERASE + (line if len(line) <= width else line[: max(width - 1, 0)] + "…"))
        self._real.flush()
        self._shown = True

    def flush(self) -> None:
        with self._lock:
            self._real.flush()

    def _is_head(self, name: str) -> bool:
        return self._head < len(self._order) and self._order[self._head] == name

    def _finish(self, name: str) -> None:
        with self._lock:
            self._done.add(name)
            while self._head < len(self._order) and self._order[self._head] in self._done:
                self._head += 1
                if self._head < len(self._order):  # the next suite catches up, then goes on live
                    waiting = self._buffers[self._order[self._head]]
                    if waiting:
                        self._out("".join(waiting))
                    waiting.clear()
            self._real.flush()

    def __getattr__(self, attribute: str) -> Any:  # isatty, encoding, fileno…: the terminal's
        return getattr(self._real, attribute)


@contextmanager
def ordered_output(order: list[str], status: Callable[[], str] | None = None) -> Iterator[OrderedOutput]:
    """Install an :class:`OrderedOutput` as ``sys.stdout`` for the block (with a status line when given)."""
    real = sys.stdout
    output = OrderedOutput(real, order, status)
    sys.stdout = output
    try:
        yield output
    finally:
        output.close_status()
        sys.stdout = real
        for name in order:  # a suite that never started or finished (a forced exit): say what it said
            if output._buffers[name]:
                real.write("".join(output._buffers[name]))
                output._buffers[name].clear()
        real.flush()
