"""Read a repository's state into a :class:`~.snapshot.RepositorySnapshot` with plain ``git``.

:func:`read_refs` is the state a conversation starts from (taken once, before it); after it,
:func:`read_snapshot` reads the end state against it: a handful of git commands (the refs, one
``git log --all`` for the whole commit graph, HEAD, the status, and per new or moved branch its
fork point, diff and the changed files' text).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_evals.packs.release.git_command import RepositoryError, git
from agent_evals.packs.release.seed_repo import MAIN
from agent_evals.packs.release.snapshot import BranchChange, Commit, RefState, RepositorySnapshot

_RECORD, _FIELD = "\x1e", "\x1f"
MAX_FILE_CHARS = 200_000  # a changed file's text kept in the snapshot, at most


@dataclass(frozen=True)
class _Node:
    parents: tuple[str, ...]
    message: str
    files: tuple[str, ...]


def read_refs(repo: Path) -> RefState:
    """The branches and tags of ``repo`` and the commits each branch reaches."""
    branches, tags = _refs(repo)
    graph = _graph(repo)
    return RefState(branches, tags, {name: _reachable(graph, sha) for name, sha in branches.items()})


def read_snapshot(repo: Path, start: RefState, base: str = MAIN) -> RepositorySnapshot:
    """The end state of ``repo`` against ``start`` (see the module docstring)."""
    branches, tags = _refs(repo)
    graph = _graph(repo)
    end = RefState(branches, tags, {name: _reachable(graph, sha) for name, sha in branches.items()})
    sha, name = git(repo, "rev-parse", "HEAD", "--symbolic-full-name", "HEAD").split()
    head = name.removeprefix("refs/heads/") if name.startswith("refs/heads/") else None
    known = {c for shas in start.reachable.values() for c in shas} | set(start.tags.values())
    order = git(repo, "rev-list", "--topo-order", "--reverse", "--all").split()
    commits = tuple(
        Commit(c, graph[c].parents, graph[c].message, graph[c].files,
               tuple(b for b in sorted(branches) if c in end.reachable[b]))
        for c in order if c not in known and c in graph
    )
    touched = sorted(set(end.branches) - set(start.branches)) + sorted(
        b for b, tip in start.branches.items() if b in end.branches and end.branches[b] != tip)
    base_sha = start.branches.get(base)
    changes = tuple(_change(repo, b, end.branches[b], base_sha) for b in touched)
    status = git(repo, "-c", "core.quotePath=false", "status", "--porcelain=v1").splitlines()
    return RepositorySnapshot(base, start, end, head, sha, commits, changes, tuple(status))


def _refs(repo: Path) -> tuple[dict[str, str], dict[str, str]]:
    out = git(repo, "for-each-ref", "--format=%(refname)%09%(objectname)", "refs/heads", "refs/tags")
    branches: dict[str, str] = {}
    tags: dict[str, str] = {}
    for line in out.splitlines():
        ref, sha = line.split("\t")
        if ref.startswith("refs/heads/"):
            branches[ref.removeprefix("refs/heads/")] = sha
        else:
            tags[ref.removeprefix("refs/tags/")] = sha
    return branches, tags


def _graph(repo: Path) -> dict[str, _Node]:
    """Every commit any ref or HEAD reaches: its parents, message and changed files."""
    out = git(repo, "-c", "core.quotePath=false", "log", "--all", "--name-only",
              f"--format={_RECORD}%H{_FIELD}%P{_FIELD}%B{_FIELD}")
    graph: dict[str, _Node] = {}
    for record in out.split(_RECORD)[1:]:
        sha, parents, message, rest = record.split(_FIELD, 3)
        files = tuple(line for line in rest.splitlines() if line.strip())
        graph[sha] = _Node(tuple(parents.split()), message.strip() + "\n", files)
    return graph


def _reachable(graph: dict[str, _Node], tip: str) -> tuple[str, ...]:
    seen: list[str] = []
    found: set[str] = set()
    stack = [tip]
    while stack:
        sha = stack.pop()
        if sha in found or sha not in graph:
            continue
        found.add(sha)
        seen.append(sha)
        stack.extend(reversed(graph[sha].parents))
    return tuple(seen)


def _change(repo: Path, branch: str, tip: str, base_sha: str | None) -> BranchChange:
    fork = _merge_base(repo, base_sha, tip) if base_sha else None
    if fork is None:
        return BranchChange(branch, tip, "", (), "")
    files = tuple(git(repo, "-c", "core.quotePath=false", "diff", "--name-only", fork, tip).splitlines())
    diff = git(repo, "diff", "--no-color", "--no-ext-diff", fork, tip)
    return BranchChange(branch, tip, fork, files, diff,
                        {f: _text(repo, fork, f) for f in files}, {f: _text(repo, tip, f) for f in files})


def _merge_base(repo: Path, one: str, other: str) -> str | None:
    try:
        return git(repo, "merge-base", one, other).strip() or None
    except RepositoryError:
        return None  # no common history


def _text(repo: Path, revision: str, path: str) -> str | None:
    try:
        return git(repo, "show", f"{revision}:{path}")[:MAX_FILE_CHARS]
    except RepositoryError:
        return None  # not in that revision


__all__ = ["MAX_FILE_CHARS", "read_refs", "read_snapshot"]
