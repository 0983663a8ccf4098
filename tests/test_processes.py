"""Helper processes: start_detached (no Ctrl-C of the caller's terminal reaches the child, from its
first instruction, while a SIGINT sent to it on purpose still works) and ProcessRef (a pid known
again by its start time)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from agent_evals.processes import ProcessRef, kit_command, pid_alive, start_detached, start_time

# The child says whether it leads its own session and how SIGINT stands, then waits to be told.
REPORT = (
    "import os, signal, sys\n"
    "blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])\n"
    "print(os.getsid(0) == os.getpid(), blocked, signal.getsignal(signal.SIGINT) is signal.default_int_handler,"
    " flush=True)\n"
    "sys.stdin.read()\n"
)


# A caller that leads a process group of its own (so the group's SIGINT reaches nobody else: not
# pytest, not its other workers) starts a child whose setup sends that group a SIGINT just before
# the child leaves it (the worst moment), from the main thread or from another thread, then
# prints the child's report and the SIGINTs it got itself.
CALLER = """
import os, signal, subprocess, sys, threading
from agent_evals.processes import start_detached
seen = []
signal.signal(signal.SIGINT, lambda signum, _: seen.append(signum))
def start():
    return start_detached([sys.executable, "-c", sys.argv[2]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          _before_session=lambda: os.killpg(os.getpgid(0), signal.SIGINT))
children = []
if sys.argv[1] == "thread":
    worker = threading.Thread(target=lambda: children.append(start()))
    worker.start()
    worker.join()
else:
    children.append(start())
child = children[0]
report = child.stdout.readline().decode().split()
child.stdin.close()
code = child.wait(timeout=30)
signal.pthread_sigmask(signal.SIG_SETMASK, signal.pthread_sigmask(signal.SIG_BLOCK, []))  # runs a pending handler
print(*report, code, len(seen))
"""


@pytest.mark.parametrize("where", ["main", "thread"])
def test_a_ctrl_c_between_fork_and_setsid_does_not_kill_the_child(where: str) -> None:
    """The window that killed the portal mid-start: a SIGINT to the whole group while the child is
    still in it. The child starts as if nothing happened (own session, SIGINT unblocked, default
    handler, exit 0); the caller got the Ctrl-C once (it was not lost). Suites start their
    processes from threads of their own: the same holds there."""
    done = subprocess.run([sys.executable, "-c", CALLER, where, REPORT], capture_output=True, text=True,
                          timeout=60, start_new_session=True)
    assert done.stdout.split() == ["True", "False", "True", "0", "1"], done.stdout + done.stderr


def _start(**options: object) -> subprocess.Popen[bytes]:
    return start_detached([sys.executable, "-c", REPORT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          **options)  # type: ignore[arg-type]


def _report(child: subprocess.Popen[bytes]) -> list[str]:
    assert child.stdout is not None
    return child.stdout.readline().decode().split()


def _finish(child: subprocess.Popen[bytes]) -> int:
    assert child.stdin is not None
    child.stdin.close()
    return child.wait(timeout=30)


def test_a_sigint_sent_to_the_child_on_purpose_still_stops_it() -> None:
    child = _start()
    assert _report(child)[0] == "True"
    child.send_signal(signal.SIGINT)
    assert child.wait(timeout=30) == -signal.SIGINT  # stopped by it (Python re-raises it), not ignoring it
    assert child.stdin is not None
    child.stdin.close()


def test_the_caller_keeps_its_signal_mask() -> None:
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    _finish(_start())
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_die_with_parent_stops_the_child_when_its_starting_thread_ends() -> None:
    """What keeps Promptfoo from outliving a runner killed outright."""
    children: list[subprocess.Popen[bytes]] = []
    thread = threading.Thread(target=lambda: children.append(_start(die_with_parent=True)))
    thread.start()
    thread.join()
    child = children[0]
    assert child.wait(timeout=30) == -signal.SIGTERM


def test_it_refuses_options_it_sets_itself() -> None:
    with pytest.raises(TypeError, match="start_new_session"):
        start_detached([sys.executable, "-c", ""], start_new_session=True)


def test_a_process_is_known_again_by_its_pid_and_start_time() -> None:
    me = ProcessRef.current()
    assert me.alive()
    assert me.started is not None and me.started == start_time(os.getpid())
    assert not ProcessRef(os.getpid(), "1").alive()  # the pid came back for another process
    assert ProcessRef(os.getpid(), None).alive()  # recorded where the system gave no start time


def test_a_dead_process_is_not_alive_whatever_its_start_time() -> None:
    child = subprocess.Popen([sys.executable, "-c", ""])
    ref = ProcessRef.of(child.pid)
    child.wait()
    assert not ref.alive()
    assert not pid_alive(child.pid)


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


def test_a_file_names_its_owner_and_a_sweep_reads_it_back() -> None:
    me = ProcessRef.current()
    line = f"# suite.yaml (agent-evals run, {me.owner_words}); removed after the suite"
    assert ProcessRef.from_owner_words(line) == me and ProcessRef.owner_alive(line)
    assert ProcessRef.owner_alive(me.owner_words + "\n")  # alone on its line, as a folder's OWNER file has it
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = f"owner pid {child.stdout.strip()} started -"
    assert ProcessRef.from_owner_words(gone) == ProcessRef(int(child.stdout.strip())) and not ProcessRef.owner_alive(gone)
    reused = f"owner pid {me.pid} started {int(me.started or 0) + 1}"  # my pid, another start: not me
    assert me.started is None or not ProcessRef.owner_alive(reused)
    assert ProcessRef.from_owner_words("no owner here") is None and not ProcessRef.owner_alive("")


def test_kit_command_is_this_installations_agent_evals() -> None:
    """A child started with it is the kit of this Python (its virtual environment), whatever PATH holds."""
    assert kit_command("portal", "serve")[:1] == [sys.executable]
    done = subprocess.run(kit_command("portal", "--help"), capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PATH": "/nonexistent"})
    assert done.returncode == 0, done.stderr
    assert "{serve,reset}" in done.stdout
