"""The release pack's test repository, built from ``seed/history.yaml`` with one ``git fast-import``.

Every commit has the seed's author and committer and its own fixed date, and the tags a fixed
tagger, so the commit ids are the same on every machine (:data:`SEED_MAIN` pins main's).
:func:`build_seed_repository` makes a working repository with ``main`` checked out; the agent's
commits in a copy are made with :data:`AGENT_IDENTITY` (the copy's own git config).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from agent_evals.packs.release.git_command import git

HISTORY = Path(__file__).with_name("seed") / "history.yaml"
MAIN = "main"
AGENT_IDENTITY = ("Release Notes Agent", "release-notes-agent@platform.example")
# main's commit id after build_seed_repository: a test fails when the history (or the build) changes it
SEED_MAIN = "4c956cb960aa931fbceb3db5460c7eff62cf8990"


@dataclass(frozen=True)
class SeedCommit:
    id: str
    message: str
    date: datetime
    files: dict[str, str | None]
    branch: str = MAIN
    start: str | None = None  # the commit (by id) a new branch starts at


@dataclass(frozen=True)
class SeedHistory:
    author: tuple[str, str]
    commits: tuple[SeedCommit, ...]
    tags: dict[str, str]  # tag -> commit id

    def commit(self, commit_id: str) -> SeedCommit:
        return next(c for c in self.commits if c.id == commit_id)


@cache
def seed_history(path: Path = HISTORY) -> SeedHistory:
    """The history file, read once (raises ValueError naming what is wrong)."""
    raw: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    author = raw["author"]
    commits = tuple(
        SeedCommit(
            id=str(item["id"]), message=str(item["message"]).rstrip("\n") + "\n",
            date=_utc(item["date"]), files=dict(item.get("files") or {}),
            branch=str(item.get("branch") or MAIN), start=item.get("from"),
        )
        for item in raw["commits"]
    )
    ids = [c.id for c in commits]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: commit ids repeat")
    tags = {str(tag): str(target) for tag, target in (raw.get("tags") or {}).items()}
    for tag, target in tags.items():
        if target not in ids:
            raise ValueError(f"{path}: tag {tag} names no commit {target!r}")
    return SeedHistory((str(author["name"]), str(author["email"])), commits, tags)


def build_seed_repository(path: Path, history: SeedHistory | None = None) -> Path:
    """A new git repository at ``path`` (made, or an empty folder) holding the seed history, with
    ``main`` checked out and the agent's identity in its config; answers ``path``."""
    history = history or seed_history()
    path.mkdir(parents=True, exist_ok=True)
    # no sample hooks and one pack instead of ~90 loose objects: a run copies the seed for every
    # conversation (``RunRepositories.working_copy``): 37 files and folders instead of 191
    git(path, "init", "--quiet", "--template=", f"--initial-branch={MAIN}")
    git(path, "-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", "--done", stdin=fast_import_stream(history))
    git(path, "checkout", "--quiet", "--force", MAIN)
    with (path / ".git" / "config").open("a", encoding="utf-8") as config:
        config.write(f"[user]\n\tname = {AGENT_IDENTITY[0]}\n\temail = {AGENT_IDENTITY[1]}\n")
    return path


def fast_import_stream(history: SeedHistory) -> bytes:
    """The ``git fast-import`` input that writes ``history``: one mark per commit, then the tags."""
    out = io.BytesIO()
    marks = {commit.id: number for number, commit in enumerate(history.commits, start=1)}
    started: set[str] = set()
    name, email = history.author
    for commit in history.commits:
        stamp = f"{name} <{email}> {int(commit.date.timestamp())} +0000"
        out.write(f"commit refs/heads/{commit.branch}\nmark :{marks[commit.id]}\n"
                  f"author {stamp}\ncommitter {stamp}\n".encode())
        _data(out, commit.message)
        if commit.branch not in started and commit.start is not None:
            out.write(f"from :{marks[commit.start]}\n".encode())
        started.add(commit.branch)
        for file, text in sorted(commit.files.items()):
            if text is None:
                out.write(f"D {file}\n".encode())
            else:
                out.write(f"M 100644 inline {file}\n".encode())
                _data(out, text)
        out.write(b"\n")
    for tag, target in history.tags.items():
        tagged = history.commit(target)
        out.write(f"tag {tag}\nfrom :{marks[target]}\n"
                  f"tagger {name} <{email}> {int(tagged.date.timestamp())} +0000\n".encode())
        _data(out, tagged.message)
    out.write(b"done\n")
    return out.getvalue()


def _data(out: io.BytesIO, text: str) -> None:
    payload = text.encode("utf-8")
    out.write(f"data {len(payload)}\n".encode() + payload + b"\n")


def _utc(value: Any) -> datetime:
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment


__all__ = ["AGENT_IDENTITY", "HISTORY", "MAIN", "SEED_MAIN", "SeedCommit", "SeedHistory",
           "build_seed_repository", "fast_import_stream", "seed_history"]
