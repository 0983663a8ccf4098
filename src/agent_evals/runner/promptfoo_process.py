"""Run ``promptfoo`` as a child the runner controls: its own session (a terminal's Ctrl-C reaches
the runner only, which forwards one SIGINT), killed if the runner dies (Linux), its output read
line by line (the eval id is taken from it) and handed to ``echo``. Every ``promptfoo`` command
of the kit (``eval``, ``import``, ``view``) runs as :func:`promptfoo_command` with :func:`promptfoo_env`."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agent_evals.paths import project_root
from agent_evals.processes import start_detached
from agent_evals.record import KitError
from agent_evals.runner.interrupts import Interrupts
from agent_evals.testing.pause_points import pause_point

SESSION_END_S = 5.0
# Resolves the imports between an installed ES module package's files without Node's parse of its package.json
# each time: ~0.17 s of CPU less per Promptfoo start (see the file)
ESM_SCOPE_CACHE = Path(__file__).with_name("esm_scope_cache.cjs")
EVAL_ID = re.compile(r"\b(eval-[A-Za-z0-9]+-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\b")


def promptfoo_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every promptfoo command of the kit runs with."""
    env = dict(os.environ if base is None else base)
    root = project_root()
    env["PATH"] = f"{root / 'node_modules' / '.bin'}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("PROMPTFOO_DISABLE_TELEMETRY", "1")
    env.setdefault("PROMPTFOO_DISABLE_UPDATE", "1")
    env.setdefault("PROMPTFOO_PYTHON", sys.executable)
    # The kit retries model calls itself: Promptfoo must never re-run a whole conversation
    # because an error's text mentions a rate limit (docs/provider.md).
    env.setdefault("PROMPTFOO_DISABLE_ADAPTIVE_SCHEDULER", "1")
    env.setdefault("NODE_NO_WARNINGS", "1")
    env.setdefault("PROMPTFOO_DISABLE_SHARING", "1")
    # Promptfoo's response cache keys a Python provider's result by the eval id, so it never
    # hits; it only rewrites its whole file (~/.promptfoo/cache) after every row, longer each run.
    env["PROMPTFOO_CACHE_ENABLED"] = "false"
    # A row's trace is read once its spans stop changing: by default two equal reads 250 ms apart. The
    # kit's provider posts a conversation's spans before it answers and the receiver stores them before
    # it replies, so the first read has them all (provider/tracing.py): one read, no wait per row.
    env.setdefault("PROMPTFOO_TRACE_FETCH_STABLE_POLLS", "1")
    # Node keeps the compiled modules of Promptfoo between runs: about 0.2 s of CPU less per start
    env.setdefault("NODE_COMPILE_CACHE", str(root / "node_modules" / ".cache" / "node-compile"))
    return with_node_preload(env, ESM_SCOPE_CACHE)


def with_node_preload(env: dict[str, str], script: Path) -> dict[str, str]:
    """``env`` with ``script`` preloaded into every Node process it starts (``NODE_OPTIONS=--require``,
    quoted: a path with spaces stays one), after whatever NODE_OPTIONS the user set; once, also when
    ``env`` came from a process that had it (a kit command Promptfoo started)."""
    preload = f'--require "{script}"'
    options = env.get("NODE_OPTIONS", "")
    if preload not in options:
        env["NODE_OPTIONS"] = f"{options} {preload}".strip()
    return env


def promptfoo_command(*args: str) -> list[str]:
    binary = project_root() / "node_modules" / ".bin" / "promptfoo"
    if not binary.exists():
        raise KitError(f"{binary} is missing: run `scripts/setup.sh` (or `npm ci`) in {project_root()}", kind="config")
    return [str(binary), *args]


@dataclass
class PromptfooResult:
    code: int
    eval_id: str | None


def run_promptfoo(
    command: list[str],
    env: dict[str, str],
    interrupts: Interrupts,
    echo: Callable[[str], None],
    on_eval_id: Callable[[str], None] | None = None,
) -> PromptfooResult:
    return follow_promptfoo(start_promptfoo(command, env, interrupts), interrupts, echo, on_eval_id)


def start_promptfoo(
    command: list[str], env: dict[str, str], interrupts: Interrupts, *, pass_fds: tuple[int, ...] = ()
) -> subprocess.Popen[bytes]:
    """Promptfoo spawned in its own session, in ``interrupts``' care (a Ctrl-C reaches it through the
    runner); ``pass_fds`` stay open in it (the system's pipe: ``runner/system_handoff.py``). The caller
    follows it (:func:`follow_promptfoo`), or ends it (:func:`end_promptfoo`) if something comes first."""
    process = start_detached(
        command, die_with_parent=True, env=env, cwd=project_root(), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, pass_fds=pass_fds,
    )
    try:  # whatever stops the runner here (a forced exit included) takes Promptfoo with it
        pause_point("promptfoo-starting")
        interrupts.started(process)
    except BaseException:
        end_promptfoo(process, interrupts)
        raise
    return process


def follow_promptfoo(
    process: subprocess.Popen[bytes],
    interrupts: Interrupts,
    echo: Callable[[str], None],
    on_eval_id: Callable[[str], None] | None = None,
) -> PromptfooResult:
    """Promptfoo's lines to ``echo`` (its eval id to ``on_eval_id``) until it exits; then nothing of
    its session is left."""
    eval_id: str | None = None
    try:  # whatever stops the runner here (a forced exit included) takes Promptfoo with it
        assert process.stdout is not None
        for raw in iter(process.stdout.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if eval_id is None and (match := EVAL_ID.search(line)):
                eval_id = match.group(1)
                if on_eval_id is not None:
                    on_eval_id(eval_id)
            echo(line)
        code = process.wait()
    except BaseException:
        if process.poll() is None:
            process.kill()
            process.wait()
        raise
    finally:
        interrupts.ended(process)
        _end_session(process.pid)
    return PromptfooResult(code, eval_id)


def end_promptfoo(process: subprocess.Popen[bytes], interrupts: Interrupts) -> None:
    """Kill Promptfoo and whatever is left of its session, now."""
    if process.poll() is None:
        process.kill()
        process.wait()
    interrupts.ended(process)
    _end_session(process.pid)


def _end_session(pid: int) -> None:
    """Whatever is left of Promptfoo's session once it is gone: nothing after a normal exit; its
    Python workers (or warm launchers, whose keepers then stop the workers) when it was killed, so
    that no conversation goes on after the cleanup. Waits until the group is empty (bounded)."""
    deadline = time.monotonic() + SESSION_END_S
    try:
        os.killpg(pid, signal.SIGKILL)
        while time.monotonic() < deadline:
            os.killpg(pid, 0)
            time.sleep(0.02)
    except (ProcessLookupError, PermissionError):
        return
