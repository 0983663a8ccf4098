"""What a tool call of the release agent made in its working copy: the run record's side effects
(:meth:`ReleaseSystem.side_effect`).

==========================  ==========  ===============================================================
successful call             kind        id
==========================  ==========  ===============================================================
``git_create_branch``       ``branch``  the new branch's name (``branch_name``)
``git_commit``              ``commit``  the commit's id, from the server's answer (``… with hash <sha>``)
``write_file``              ``file``    the path written (``path``)
``edit_file``               ``file``    the path edited (``path``); a ``dryRun`` changes nothing
``move_file``               ``file``    where the file went (``destination``)
==========================  ==========  ===============================================================

A path inside the conversation's working copy is kept relative to it (``CHANGELOG.md``), so a replay
lists the same ids as its recording. What the repository shows at the end (branches moved or
deleted, files left uncommitted) is the snapshot's resource ``side_effects``
(:func:`.repository.side_effects`).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any, Final

from agent_evals.authoring import SideEffect, ToolCall
from agent_evals.packs.release.repository import COPY_SEPARATOR, WORK

BRANCH: Final = "branch"
COMMIT: Final = "commit"
FILE: Final = "file"
_COMMITTED = re.compile(r"\bhash ([0-9a-f]{7,40})\b")
_FILE_ARGUMENT = {"write_file": "path", "edit_file": "path", "move_file": "destination"}


def made_by(call: ToolCall) -> SideEffect | None:
    """The branch, commit or file a successful call made (see the module docstring), else None."""
    if call.outcome != "ok" or not isinstance(call.arguments, dict):
        return None
    arguments = call.arguments
    if call.name == "git_create_branch":
        return _named(BRANCH, arguments.get("branch_name"))
    if call.name == "git_commit":
        match = _COMMITTED.search(str(call.result or ""))
        return SideEffect(COMMIT, match[1]) if match else None
    if call.name in _FILE_ARGUMENT and not (call.name == "edit_file" and arguments.get("dryRun") is True):
        path = arguments.get(_FILE_ARGUMENT[call.name])
        return _named(FILE, in_copy(path) if isinstance(path, str) else None)
    return None


def in_copy(path: str) -> str:
    """``path`` relative to the working copy when it names one (``…/work/<eval>--<test>/CHANGELOG.md``),
    else as given without a leading ``./``."""
    parts = PurePosixPath(path).parts
    for index in range(len(parts) - 1, 0, -1):
        if parts[index - 1] == WORK and COPY_SEPARATOR in parts[index] and index + 1 < len(parts):
            return str(PurePosixPath(*parts[index + 1:]))
    return str(PurePosixPath(path)) if path.strip() else ""


def _named(kind: str, name: Any) -> SideEffect | None:
    return SideEffect(kind, name) if isinstance(name, str) and name.strip() else None


__all__ = ["BRANCH", "COMMIT", "FILE", "in_copy", "made_by"]
