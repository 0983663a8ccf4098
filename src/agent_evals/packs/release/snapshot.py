"""The end state of a release-notes conversation: the repository's refs before and after, the
commits the conversation made, and what each new or moved branch changed. Plain data, read by
:mod:`.git_state` and graded by the pack's checks; it travels in the run record as JSON
(:meth:`RepositorySnapshot.to_dict`, in the snapshot's resource :data:`RESOURCE`).

A branch's ``reachable`` commits let a check see history rewritten: a commit reachable from a
branch at the start that is no longer reachable from it at the end was dropped (a reset, an amend,
a rebase), whatever the branch's tip is now.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

RESOURCE = "repository"  # the run record's snapshot.resources key that holds a RepositorySnapshot


class SnapshotError(ValueError):
    """A snapshot that is not a repository snapshot; the message says what is wrong."""


@dataclass(frozen=True)
class RefState:
    """Branches and tags at one moment, and the commits each branch reaches (newest first)."""

    branches: Mapping[str, str]
    tags: Mapping[str, str]
    reachable: Mapping[str, tuple[str, ...]]

    def to_dict(self) -> dict[str, Any]:
        return {"branches": dict(self.branches), "tags": dict(self.tags),
                "reachable": {name: list(shas) for name, shas in self.reachable.items()}}

    @classmethod
    def from_dict(cls, raw: Any) -> RefState:
        data = _mapping(raw, "a ref state")
        return cls(_str_map(data.get("branches"), "branches"), _str_map(data.get("tags"), "tags"),
                   {str(k): tuple(map(str, v)) for k, v in _mapping(data.get("reachable"), "reachable").items()})


@dataclass(frozen=True)
class Commit:
    """A commit the conversation made: its parents, message and the files it changed."""

    sha: str
    parents: tuple[str, ...]
    message: str
    files: tuple[str, ...]
    branches: tuple[str, ...] = ()  # the branches that reach it at the end

    @property
    def subject(self) -> str:
        return self.message.strip().splitlines()[0] if self.message.strip() else ""

    def to_dict(self) -> dict[str, Any]:
        return {"sha": self.sha, "parents": list(self.parents), "message": self.message,
                "files": list(self.files), "branches": list(self.branches)}

    @classmethod
    def from_dict(cls, raw: Any) -> Commit:
        data = _mapping(raw, "a commit")
        return cls(str(data.get("sha", "")), tuple(data.get("parents") or ()), str(data.get("message", "")),
                   tuple(data.get("files") or ()), tuple(data.get("branches") or ()))


@dataclass(frozen=True)
class BranchChange:
    """A branch that is new or moved: where it left the base branch, what it changed since, and the
    text of each changed file there (``before``) and at its tip (``after``; None: no such file)."""

    name: str
    tip: str
    fork_point: str
    files: tuple[str, ...]
    diff: str
    before: Mapping[str, str | None] = field(default_factory=dict)
    after: Mapping[str, str | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tip": self.tip, "fork_point": self.fork_point, "files": list(self.files),
                "diff": self.diff, "before": dict(self.before), "after": dict(self.after)}

    @classmethod
    def from_dict(cls, raw: Any) -> BranchChange:
        data = _mapping(raw, "a branch change")
        return cls(str(data.get("name", "")), str(data.get("tip", "")), str(data.get("fork_point", "")),
                   tuple(data.get("files") or ()), str(data.get("diff", "")),
                   dict(data.get("before") or {}), dict(data.get("after") or {}))


@dataclass(frozen=True)
class RepositorySnapshot:
    """The repository when the conversation ended, against the state it started from."""

    base: str  # the base branch (main)
    start: RefState
    end: RefState
    head: str | None  # the branch checked out at the end; None: a detached HEAD
    head_sha: str
    commits: tuple[Commit, ...] = ()  # reachable at the end and not at the start, oldest first
    changes: tuple[BranchChange, ...] = ()  # the branches that are new or moved
    uncommitted: tuple[str, ...] = ()  # `git status --porcelain` lines of the working copy

    # -- reading -------------------------------------------------------------------------
    def created(self) -> list[str]:
        return sorted(set(self.end.branches) - set(self.start.branches))

    def deleted(self) -> list[str]:
        return sorted(set(self.start.branches) - set(self.end.branches))

    def moved(self) -> list[str]:
        return sorted(name for name, sha in self.start.branches.items()
                      if name in self.end.branches and self.end.branches[name] != sha)

    def lost(self, branch: str) -> list[str]:
        """Commits ``branch`` reached at the start and no longer reaches (it still exists)."""
        if branch not in self.end.branches:
            return []
        now = set(self.end.reachable.get(branch, ()))
        return [sha for sha in self.start.reachable.get(branch, ()) if sha not in now]

    def change(self, branch: str) -> BranchChange | None:
        return next((change for change in self.changes if change.name == branch), None)

    def commits_on(self, branch: str) -> list[Commit]:
        return [commit for commit in self.commits if branch in commit.branches]

    # -- JSON ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"base": self.base, "start": self.start.to_dict(), "end": self.end.to_dict(), "head": self.head,
                "head_sha": self.head_sha, "commits": [c.to_dict() for c in self.commits],
                "changes": [c.to_dict() for c in self.changes], "uncommitted": list(self.uncommitted)}

    @classmethod
    def from_dict(cls, raw: Any) -> RepositorySnapshot:
        data = _mapping(raw, "a repository snapshot")
        head = data.get("head")
        return cls(
            str(data.get("base") or "main"), RefState.from_dict(data.get("start")), RefState.from_dict(data.get("end")),
            None if head is None else str(head), str(data.get("head_sha", "")),
            tuple(Commit.from_dict(c) for c in data.get("commits") or ()),
            tuple(BranchChange.from_dict(c) for c in data.get("changes") or ()),
            tuple(map(str, data.get("uncommitted") or ())),
        )


def _mapping(raw: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise SnapshotError(f"expected {what} (an object), got {type(raw).__name__}")
    return raw


def _str_map(raw: Any, what: str) -> dict[str, str]:
    return {str(k): str(v) for k, v in _mapping(raw if raw is not None else {}, what).items()}


__all__ = ["RESOURCE", "BranchChange", "Commit", "RefState", "RepositorySnapshot", "SnapshotError"]
