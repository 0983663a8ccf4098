"""The commands the kit suggests, written to run as printed in a normal shell.

``agent-evals`` lives in the project's ``.venv/bin``, which is not on a shell's ``PATH``: a
hint names ``npm run <script> -- …`` where the project has an npm script for it (npm runs it
from the project's root) and ``npx agent-evals …`` otherwise (the project's npm bin,
``scripts/npm-cli``). A path in a hint is relative when the shell is at the project's root
(where npm runs its scripts too), else absolute, so it means the same file for both.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from agent_evals.paths import project_root

NPM_SCRIPTS = {"run": "eval", "check": "check", "report": "report", "gate": "gate", "cleanup": "cleanup",
               "view": "eval:view"}  # package.json: the agent-evals subcommands with an npm script


def command(subcommand: str, *args: str) -> str:
    """``npm run report -- run-1a2b`` / ``npx agent-evals merge results/*.json`` (arguments quoted for a shell
    unless they are globs, which the shell expands)."""
    words = " ".join(a if any(c in a for c in "*?[") and " " not in a else shlex.quote(a) for a in args)
    script = NPM_SCRIPTS.get(subcommand)
    if script is not None:
        return f"npm run {script}" + (f" -- {words}" if words else "")
    return f"npx agent-evals {subcommand}" + (f" {words}" if words else "")


def shown_path(path: str | Path) -> str:
    """``path`` as a hint writes it: relative to the project's root when the shell is there and the path below
    it, else absolute."""
    absolute = Path(os.path.abspath(path))
    root = project_root().resolve()
    if Path.cwd().resolve() == root:
        try:
            return str(absolute.resolve().relative_to(root)) if absolute.is_absolute() else str(path)
        except ValueError:
            pass
    return str(absolute)
