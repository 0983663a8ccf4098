"""The release pack's system under test, as plain functions the core's System protocol can wrap:
the test repository per run and a working copy per conversation, the conversation's side effects,
undo, and the sweep of what a killed run left.

Layout under a base folder (the run's data dir, say)::

    <base>/<eval id>/OWNER        "owner pid <pid> started <start time>": the process that made it
    <base>/<eval id>/seed/        the seed repository, built once per run (~40 ms)
    <base>/<eval id>/work/<eval id>--worker-<pid>/
                                  a worker's working copy: a plain copy of seed/ (~15 ms; `git clone
                                  --local` with every branch took ~25 ms), reset to the seed's state
                                  in place before and after each of its conversations

The MCP servers run with the working copy as their working directory and their one allowed
directory, so ``repo_path: "."`` and ``path: "CHANGELOG.md"`` name it in every conversation and a
recording replays on another copy unchanged. :data:`SERVER_ENVIRONMENT` fixes the dates of the
commits the agent makes, so their ids are the same in a recording and its replay.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent_evals.authoring import ProcessRef
from agent_evals.packs.release.git_state import read_refs, read_snapshot
from agent_evals.packs.release.seed_repo import build_seed_repository
from agent_evals.packs.release.snapshot import RefState, RepositorySnapshot

OWNER_FILE = "OWNER"
WORK = "work"  # the run folder's working copies: work/<eval id>--worker-<pid>
COPY_SEPARATOR = "--"  # between the eval id and the worker in a working copy's folder name
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# the date of every commit the agent makes (GitPython, which mcp-server-git commits with, reads these)
COMMIT_DATE = "1744372800 +0000"  # 2025-04-11 12:00 UTC, after the seed's last commit
SERVER_ENVIRONMENT = {"GIT_AUTHOR_DATE": COMMIT_DATE, "GIT_COMMITTER_DATE": COMMIT_DATE}

ChangeKind = Literal["branch", "commit", "file"]


@dataclass(frozen=True)
class RepositoryChange:
    """One thing a conversation changed in its working copy, as its end state shows it (the record's
    side effects are what its tool calls made: :mod:`.made`)."""

    kind: ChangeKind
    name: str  # the branch, the commit's id, the file's path
    detail: str  # "created", "moved from 4c956cb", "deleted"; the commit's subject; the file's status

    def describe(self) -> str:
        return f"{self.kind} {self.name} ({self.detail})"


@dataclass(frozen=True)
class WorkingCopy:
    """A conversation's copy of the seed and the refs it started with."""

    path: Path
    start: RefState

    def snapshot(self) -> RepositorySnapshot:
        return read_snapshot(self.path, self.start)


@dataclass(frozen=True)
class RunRepositories:
    """A run's folder: its owner line, the seed and the working copies."""

    root: Path
    start: RefState  # the seed's refs: every working copy starts from them

    @property
    def seed(self) -> Path:
        return self.root / "seed"

    def working_copy(self, name: str) -> WorkingCopy:
        """The working copy ``name`` holding the seed's state: made, or reset in place (its folder is
        kept: the servers a worker keeps run in it)."""
        path = self.root / WORK / folder_name(name)
        if path.is_dir():
            reset(path, self.seed)
        else:
            shutil.copytree(self.seed, path, symlinks=True)
        return WorkingCopy(path, self.start)

    def close(self) -> None:
        """Remove the run's folder: the seed and every working copy left."""
        remove_run(self.root)


def remove_run(root: Path) -> None:
    """Remove a run's folder: the seed and every working copy left."""
    shutil.rmtree(root, ignore_errors=True)


def start_run(base: Path, eval_id: str, owner: ProcessRef | None = None) -> RunRepositories:
    """The run's folder under ``base``, owned by ``owner`` (this process by default: a plain Promptfoo
    run's is the Promptfoo process), with the seed built in it."""
    root = base / folder_name(eval_id)
    root.mkdir(parents=True, exist_ok=True)
    owner = owner or ProcessRef.current()
    (root / OWNER_FILE).write_text(owner.owner_words + "\n", encoding="utf-8")
    seed = build_seed_repository(root / "seed")
    return RunRepositories(root, read_refs(seed))


def side_effects(snapshot: RepositorySnapshot) -> list[RepositoryChange]:
    """What the conversation changed, found from the repository's state against the start's: branches
    created, moved or deleted, the commits it made, the files changed and not committed."""
    start, end = snapshot.start.branches, snapshot.end.branches
    found = [RepositoryChange("branch", b, "created") for b in snapshot.created()]
    found += [RepositoryChange("branch", b, f"moved from {start[b][:7]} to {end[b][:7]}") for b in snapshot.moved()]
    found += [RepositoryChange("branch", b, "deleted") for b in snapshot.deleted()]
    found += [RepositoryChange("commit", c.sha, c.subject) for c in snapshot.commits]
    found += [RepositoryChange("file", line[3:], line[:2].strip()) for line in snapshot.uncommitted]
    return found


def open_run(root: Path) -> RunRepositories:
    """A run folder :func:`start_run` made, reached again (by a worker, a hook): its seed's refs read."""
    if not (root / "seed" / ".git").is_dir():
        raise FileNotFoundError(f"{root} holds no seed repository (its run is over, or it is not a run folder)")
    return RunRepositories(root, read_refs(root / "seed"))


def undo(working_copy: Path) -> None:
    """Take back everything the conversations did: the working copy goes (the seed is never touched)."""
    shutil.rmtree(working_copy, ignore_errors=True)


def reset(working_copy: Path, seed: Path) -> None:
    """Take back everything a conversation did, keeping the folder: its content becomes the seed's again."""
    for entry in list(working_copy.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    shutil.copytree(seed, working_copy, symlinks=True, dirs_exist_ok=True)


def stale_runs(base: Path) -> list[Path]:
    """Run folders under ``base`` whose owner is gone (a run killed outright), or with no readable owner."""
    if not base.is_dir():
        return []
    return [folder for folder in sorted(base.iterdir()) if folder.is_dir() and not _owner_alive(folder)]


def sweep(base: Path) -> list[Path]:
    """Remove the stale run folders under ``base``; answers what was removed."""
    stale = stale_runs(base)
    for folder in stale:
        shutil.rmtree(folder, ignore_errors=True)
    return stale


def _owner_alive(folder: Path) -> bool:
    try:
        return ProcessRef.owner_alive((folder / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return False


def folder_name(name: str) -> str:
    """``name`` (an eval or test id) as a folder name: unsafe characters become ``_``."""
    cleaned = _UNSAFE.sub("_", name).strip("._")
    if not cleaned:
        raise ValueError(f"{name!r} makes no folder name")
    return cleaned


__all__ = ["COMMIT_DATE", "OWNER_FILE", "SERVER_ENVIRONMENT", "RepositoryChange", "RunRepositories", "WorkingCopy",
           "folder_name", "open_run", "remove_run", "reset", "side_effects", "stale_runs", "start_run", "sweep", "undo"]
