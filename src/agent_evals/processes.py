"""Helper processes: started out of the terminal's reach, and told apart from a reused pid.

**Starting one** (:func:`start_detached`), outside the terminal's process group from its first
instruction.

A terminal's Ctrl-C is a SIGINT to its whole foreground process group. A child made with
``subprocess.Popen(..., start_new_session=True)`` is still in that group between the fork and
its own ``setsid()``, and CPython resets the child's signal handlers to the default before
that call: a Ctrl-C in that window killed the portal before it started ("the portal exited
with code -2 during startup"), and the run then looked like a crash instead of an interrupt.

:func:`start_detached` closes the window. The calling thread blocks SIGINT across the spawn,
so the child is born with SIGINT blocked; in the child, before the command runs, it leaves
the group (``setsid``), discards a SIGINT that arrived meanwhile (a pending signal whose
action becomes "ignore" is dropped), unblocks SIGINT and restores its default action. The
command then starts in a session of its own with the usual SIGINT behaviour: a Ctrl-C of the
terminal never reaches it, a SIGINT sent to it on purpose still does. A Ctrl-C that arrives
during the spawn still reaches the caller (the signal stays pending for the process until
the calling thread unblocks it, or goes to another thread).

With ``die_with_parent`` (Linux) the child also gets SIGTERM when the thread that started it
ends, so nothing outlives a runner that was killed outright.

**Knowing one again** (:class:`ProcessRef`): a pid recorded in a file (a run's manifest, the
portal's serving file) may belong to another process by the time it is read again: pids are
reused. A :class:`ProcessRef` holds the pid and the process's start time (Linux:
``/proc/<pid>/stat``), so a dead run is not taken for a live one because its pid came back.

**Running the kit's command** in a child (:class:`KitStarter`, :func:`kit_command`): this Python's
``-m agent_evals.cli``, so the child is the same installation whatever ``PATH`` holds (the portal's
helper starts ``agent-evals portal serve`` so); during a run, the same command forked warm.

Standard library only: the runner, the portal and its helper import it.
"""

from __future__ import annotations

import ctypes
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

__all__ = ["COLD", "KitStarter", "ProcessRef", "kit_command", "pid_alive", "start_detached", "start_time"]

_PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, looked up in the parent (the child must not import or load anything): among the
    symbols the interpreter has loaded already (``ctypes.util.find_library`` would run ``ldconfig -p``,
    a process, each time)."""
    if not sys.platform.startswith("linux"):
        return None
    for library in (None, "libc.so.6"):
        try:
            return ctypes.CDLL(library, use_errno=True).prctl
        except (OSError, AttributeError):
            continue
    return None


def _child_setup(prctl: Callable[..., int] | None, before_session: Callable[[], None] | None) -> Callable[[], None]:
    def setup() -> None:  # pragma: no cover - runs in the child, between fork and exec
        if before_session is not None:
            before_session()
        os.setsid()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # drops a Ctrl-C that came before the setsid
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)

    return setup


def start_detached(
    command: Sequence[str],
    *,
    die_with_parent: bool = False,
    _before_session: Callable[[], None] | None = None,
    **popen_options: Any,
) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(command, **popen_options)`` in a session of its own that no Ctrl-C of
    the caller's terminal reaches, at any moment (see the module docstring).

    ``_before_session`` runs in the child just before it leaves the group: tests use it to send
    the group a SIGINT at the worst moment.
    """
    for option in ("start_new_session", "process_group", "preexec_fn"):
        if option in popen_options:
            raise TypeError(f"start_detached sets {option} itself")
    setup = _child_setup(_prctl() if die_with_parent else None, _before_session)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return subprocess.Popen(command, preexec_fn=setup, **popen_options)  # noqa: PLW1509 - see setup
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


@dataclass(frozen=True)
class KitStarter:
    """How a child process runs the kit's command (:meth:`command`, with :attr:`env` added to its
    environment): this Python's ``-m agent_evals.cli`` by default (the same installation and virtual
    environment, no ``PATH`` lookup); during a run, the run's warm launcher, which has the process
    forked from a server that imported the kit already (``agent_evals.runner.warm_workers``)."""

    python: str = sys.executable
    env: Mapping[str, str] = field(default_factory=dict)

    def command(self, *args: str) -> list[str]:
        return [self.python, "-m", "agent_evals.cli", *args]


COLD = KitStarter()  # every process starts as a new interpreter


def kit_command(*args: str) -> list[str]:
    """The ``agent-evals`` command with ``args``, as a child process runs it (:data:`COLD`)."""
    return COLD.command(*args)


def pid_alive(pid: int) -> bool:
    """The process runs: it exists and is not a zombie (dead, not yet reaped by its parent)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    state = _stat(pid)
    return state is None or state[0] != "Z"  # no /proc (not Linux), or it went meanwhile: trust kill


def start_time(pid: int) -> str | None:
    """When the process started, in the kernel's clock ticks since boot (None: no such process,
    or no ``/proc`` to ask)."""
    state = _stat(pid)
    return state[19] if state is not None and len(state) > 19 else None


def _stat(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` from its state field on (the name before it may hold spaces)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


@dataclass(frozen=True)
class ProcessRef:
    """A process as a file records it: its pid and, where the system tells, when it started."""

    pid: int
    started: str | None = None

    @classmethod
    def of(cls, pid: int) -> Self:
        return cls(pid, start_time(pid))

    @classmethod
    def current(cls) -> Self:
        return cls.of(os.getpid())

    def alive(self) -> bool:
        """This very process still runs (not another one that got its pid since)."""
        if not pid_alive(self.pid):
            return False
        return self.started is None or start_time(self.pid) in (None, self.started)

    @property
    def owner_words(self) -> str:
        """How a file names the process that owns it: ``owner pid 123 started 4567`` (read back by
        :meth:`from_owner_words`; a sweep removes what a dead owner left)."""
        return f"owner pid {self.pid} started {self.started or '-'}"

    @classmethod
    def from_owner_words(cls, text: str) -> Self | None:
        """The owner :attr:`owner_words` wrote somewhere in ``text``, or None when it names none."""
        match = _OWNER_WORDS.search(text)
        if match is None:
            return None
        started = match.group(2)
        return cls(int(match.group(1)), None if started == "-" else started)

    @classmethod
    def owner_alive(cls, text: str) -> bool:
        """The owner ``text`` names still runs; False when it names none (nothing vouches for it)."""
        owner = cls.from_owner_words(text)
        return owner is not None and owner.alive()


_OWNER_WORDS = re.compile(r"\bowner pid (\d+) started (\S+?)(?=[)\s]|$)")
