"""Plain ``git`` as the release pack runs it: a subprocess with the user's and the system's git
configuration left out (no hooks, templates, default branch or signing of theirs), so the seed and
the snapshot read the same on every machine."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

GIT_TIMEOUT_S = 30


class RepositoryError(RuntimeError):
    """A git command on the test repository failed; the message names the command and git's last line of stderr.
    (The wiring makes it the System protocol's error of kind `system`.)"""


def git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment without the user's git settings (and with ``extra``)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update({"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
                "LC_ALL": "C"})
    env.update(extra or {})
    return env


def git(repo: Path, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None) -> str:
    """``git -C repo args…``'s standard output (raises :class:`RepositoryError`)."""
    command = ["git", "-C", str(repo), *args]
    try:
        done = subprocess.run(command, input=stdin, capture_output=True, env=git_environment(env),
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RepositoryError(f"git {' '.join(args)}: {exc}") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RepositoryError(f"git {' '.join(args)} in {repo} exited {done.returncode}: {lines[-1] if lines else 'no message'}")
    return done.stdout.decode("utf-8", "replace")


__all__ = ["GIT_TIMEOUT_S", "RepositoryError", "git", "git_environment"]
