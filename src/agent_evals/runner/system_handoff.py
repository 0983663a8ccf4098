"""Promptfoo started beside the suite's system: Promptfoo's own start (~0.8 s of loading, reading
the config, creating its eval) and the system's (the portal: ~1 s) overlap, instead of one after
the other.

The runner spawns Promptfoo first, with the read end of a pipe (its number in
``AGENT_EVALS_SYSTEM_FD``), then gets the suite's system. The kit's ``beforeAll`` hook
(``hooks/kit.js``) waits on that pipe: Promptfoo starts no Python worker before ``beforeAll`` has
returned, so what the system gives the workers (the portal's URL and token) still reaches every
one of them, through Promptfoo's environment, and nowhere else (no file, no argument). The runner
writes one JSON object and closes the pipe: ``{"env": {...}, "unset": [...]}`` once the system is
ready, or ``{"error": "..."}`` when it is not (it did not start, or the run was interrupted
meanwhile). On an error the hook throws, Promptfoo ends, and the runner keeps its noise off the
terminal (its log has it) and deletes the eval Promptfoo had already created, empty: the run ends
as it did when Promptfoo started after the system, with the system's one line.

Only a suite whose config has the kit's ``beforeAll`` extension reads the pipe
(:func:`reads_system_at_start`); any other is started the old way, after its system.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_evals.hook_policy import SYSTEM_FD_ENV
from agent_evals.paths import project_root
from agent_evals.record import KitError
from agent_evals.runner.interrupts import Interrupts
from agent_evals.runner.promptfoo_process import (
    PromptfooResult,
    end_promptfoo,
    follow_promptfoo,
    promptfoo_command,
    start_promptfoo,
)
from agent_evals.suites.discovery import Suite
from agent_evals.suites.files import load_suite
from agent_evals.system import Running

log = logging.getLogger(__name__)
KIT_HOOK = Path("hooks") / "kit.js"
DELETE_TIMEOUT_S = 30.0


def reads_system_at_start(suite: Suite) -> bool:
    """Whether the suite's config names the kit's ``beforeAll`` hook among its extensions (the
    ``file://…/hooks/kit.js:beforeAll`` of the project, relative to the suite's folder or absolute)."""
    try:
        extensions = load_suite(suite).config.get("extensions") or []
    except KitError:
        return False  # the preflight (or Promptfoo) says what is wrong with the config
    hook = (project_root() / KIT_HOOK).resolve()
    for item in extensions if isinstance(extensions, list) else []:
        text = str(item)
        path, sep, function = text.removeprefix("file://").rpartition(":")
        if sep and function == "beforeAll" and (suite.folder / path).resolve() == hook:
            return True
    return False


class SystemHandoff:
    """The pipe a Promptfoo process reads its system's environment from (see the module docstring)."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        self.sent = False

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return (self._read,)

    def env(self) -> dict[str, str]:
        """What to add to the Promptfoo process's environment."""
        return {SYSTEM_FD_ENV: str(self._read)}

    def spawned(self) -> None:
        """Promptfoo has its copy of the read end: the runner's goes."""
        if self._read >= 0:
            os.close(self._read)
            self._read = -1

    def give(self, env: Mapping[str, str], unset: Sequence[str] = ()) -> None:
        """The system is ready: ``env`` for the workers, ``unset`` the system's keys it does not give
        (a stale ``PORTAL_TOKEN`` of the runner's own environment must not reach them)."""
        self._send({"env": dict(env), "unset": [key for key in unset if key not in env]})

    def refuse(self, why: str) -> None:
        """No system: the hook throws ``why`` and Promptfoo ends without running a row."""
        self._send({"error": why})

    def close(self) -> None:
        self.spawned()
        if self._write >= 0:
            os.close(self._write)
            self._write = -1

    def _send(self, message: dict[str, object]) -> None:
        if self.sent:
            return
        self.sent = True
        data = json.dumps(message).encode()
        try:
            view = memoryview(data)
            while view:  # a few hundred bytes: one write, unless Promptfoo is gone
                view = view[os.write(self._write, view):]
        except OSError:  # Promptfoo ended already (killed, interrupted): its exit status says so
            pass
        finally:
            self.close()


@dataclass
class PromptfooBeside:
    """A Promptfoo process started before its suite's system, waiting for it on ``handoff``'s pipe."""

    process: subprocess.Popen[bytes]
    handoff: SystemHandoff
    interrupts: Interrupts

    @classmethod
    def start(cls, command: list[str], env: Mapping[str, str], interrupts: Interrupts) -> PromptfooBeside:
        handoff = SystemHandoff()
        try:
            process = start_promptfoo(command, {**env, **handoff.env()}, interrupts,
                                      pass_fds=handoff.pass_fds)
        except BaseException:
            handoff.close()
            raise
        handoff.spawned()
        return cls(process, handoff, interrupts)

    def run(self, system: Running, echo: Callable[[str], None],
            on_eval_id: Callable[[str], None] | None = None) -> PromptfooResult:
        """Hand ``system`` over and follow Promptfoo to its end (``run_promptfoo``'s second half)."""
        self.handoff.give(system.env(), system.env_keys())
        return follow_promptfoo(self.process, self.interrupts, echo, on_eval_id)

    def without_system(self, why: str, log_line: Callable[[str], None], env: Mapping[str, str], *,
                       forced: bool = False) -> None:
        """The system will not come: Promptfoo ends without a row (its lines to ``log_line`` only) and
        the eval it created, empty, is deleted from ``env``'s results database; a forced exit kills it
        at once."""
        if forced:
            self.handoff.close()
            end_promptfoo(self.process, self.interrupts)
            return
        self.handoff.refuse(why.splitlines()[0])
        result = follow_promptfoo(self.process, self.interrupts, log_line)
        if result.eval_id is not None:
            delete_eval(result.eval_id, env)


def delete_eval(eval_id: str, env: Mapping[str, str]) -> bool:
    """Delete an eval Promptfoo created and left without a row (``promptfoo delete eval``, in the
    results database of ``env``); False, logged, when it could not."""
    try:
        done = subprocess.run(promptfoo_command("delete", "eval", eval_id), env=dict(env), cwd=project_root(),
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=DELETE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired, KitError) as exc:
        log.warning("could not delete the empty eval %s: %s", eval_id, exc)
        return False
    if done.returncode != 0:
        said = done.stdout.decode(errors="replace")[-500:]
        log.warning("could not delete the empty eval %s: %s", eval_id, said)
    return done.returncode == 0
