"""The portal's data dir: the bare test repository, the PR database and a marker.

Layout::

    <data dir>/portal.json            marker, written last: its presence means "complete"
    <data dir>/spokes.git/            bare repository (main = seed commit + merged PRs)
    <data dir>/pull_requests.sqlite3  pull request records
    <parent>/.<data dir name>.lock    held (flock) while a portal serves or resets the dir

A data dir is always built in a temporary sibling and renamed into place, so a crash
never leaves a half-written one. ``ensure_data_dir`` seeds a missing or empty dir,
rebuilds a corrupt one (moving the old one aside as ``<name>.corrupt-<time>``) and
refuses a non-empty dir without the marker rather than touching someone's files.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import IO

from agent_evals.packs.spoke.portal.errors import DataDirError, GitError
from agent_evals.packs.spoke.portal.gitrepo import MAIN, GitRepo
from agent_evals.packs.spoke.portal.prstore import PullRequestStore

log = logging.getLogger(__name__)
MARKER = "portal.json"
REPO_DIR = "spokes.git"
DB_FILE = "pull_requests.sqlite3"
KEPT = ("conversations.sqlite3", "conversations.sqlite3-wal", "conversations.sqlite3-shm")  # agent_evals.live.store
FORMAT = 1


def seed_files() -> dict[str, bytes]:
    """Repository path -> content of the seed shipped in ``agent_evals/portal/seed``."""
    root = resources.files("agent_evals.packs.spoke.portal").joinpath("seed")
    files = {
        "README.md": root.joinpath("README.md").read_bytes(),
        "hub.json": root.joinpath("hub.json").read_bytes(),
    }
    for entry in sorted(root.joinpath("spokes").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            files[f"spokes/{entry.name}"] = entry.read_bytes()
    return files


def build_data_dir(target: Path) -> None:
    """Fill the empty directory ``target`` with a complete data dir."""
    repo = GitRepo.init(target / REPO_DIR)
    blobs = {path: repo.write_blob(data) for path, data in seed_files().items()}
    tree = repo.write_tree(blobs)
    commit = repo.commit(tree, [], "Seed the landing zone spokes\n")
    repo.set_branch(MAIN, commit, None)
    PullRequestStore(target / DB_FILE).close()
    marker = {
        "format": FORMAT,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seed": commit,
    }
    (target / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


def _build_in_place_of(data_dir: Path) -> None:
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{data_dir.name}.building-", dir=data_dir.parent))
    try:
        build_data_dir(tmp)
        old = None
        if data_dir.exists():
            old = data_dir.with_name(f".{data_dir.name}.old-{os.getpid()}-{time.time_ns()}")
            data_dir.rename(old)
        tmp.rename(data_dir)
        if old is not None:
            for name in KEPT:  # production conversations are not test data: a reset keeps them
                if (old / name).exists():
                    (old / name).rename(data_dir / name)
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def is_portal_dir(data_dir: Path) -> bool:
    return (data_dir / MARKER).is_file()


def problem(data_dir: Path) -> str | None:
    """Why an existing portal data dir is unusable, or ``None`` when it is healthy."""
    try:
        marker = json.loads((data_dir / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"unreadable marker {MARKER}: {exc}"
    if not isinstance(marker, dict) or marker.get("format") != FORMAT:
        return f"unknown data dir format in {MARKER}: {marker!r}"
    repo = GitRepo(data_dir / REPO_DIR)
    try:
        main = repo.resolve(f"refs/heads/{MAIN}") if (data_dir / REPO_DIR / "HEAD").is_file() else None
        if main is None or "hub.json" not in repo.list_files(main, "hub.json"):
            return "the repository has no main branch with hub.json"
    except GitError as exc:
        return f"the repository is broken: {exc}"
    return PullRequestStore.problem(data_dir / DB_FILE)


def ensure_data_dir(data_dir: Path) -> Path:
    """Make ``data_dir`` a healthy portal data dir (see the module docstring); return it."""
    data_dir = Path(data_dir).expanduser().resolve()
    if data_dir.exists() and not data_dir.is_dir():
        raise DataDirError(f"data dir {data_dir} is a file, not a directory")
    if not data_dir.exists() or not any(data_dir.iterdir()):
        log.info("creating the portal data dir %s from the seed", data_dir)
        _build_in_place_of(data_dir)
        return data_dir
    if not is_portal_dir(data_dir):
        raise DataDirError(
            f"refusing to use {data_dir}: it is not empty and is not a portal data dir "
            f"(no {MARKER}); pass an empty or new directory with --data-dir"
        )
    reason = problem(data_dir)
    if reason is not None:
        aside = data_dir.with_name(f"{data_dir.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
        log.warning(
            "data dir %s is corrupt (%s); moved it to %s and re-created it from the seed",
            data_dir,
            reason,
            aside,
        )
        data_dir.rename(aside)
        _build_in_place_of(data_dir)
    else:
        GitRepo(data_dir / REPO_DIR).remove_stale_indexes()
    return data_dir


def reset_data_dir(data_dir: Path) -> Path:
    """Replace ``data_dir`` with a freshly seeded one (refused while a portal serves it)."""
    data_dir = Path(data_dir).expanduser().resolve()
    if data_dir.exists() and data_dir.is_dir() and any(data_dir.iterdir()) and not is_portal_dir(data_dir):
        raise DataDirError(f"refusing to reset {data_dir}: it is not a portal data dir (no {MARKER})")
    if data_dir.exists() and not data_dir.is_dir():
        raise DataDirError(f"data dir {data_dir} is a file, not a directory")
    with hold_lock(data_dir):
        _build_in_place_of(data_dir)
    return data_dir


@contextlib.contextmanager
def hold_lock(data_dir: Path) -> Iterator[IO[str]]:
    """Hold the data dir's exclusive lock, or raise ``DataDirError`` if another portal holds it.

    The lock file sits beside the data dir, so it survives the dir being rebuilt.
    """
    data_dir = Path(data_dir).expanduser().resolve()
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(data_dir.with_name(f".{data_dir.name}.lock"), "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise DataDirError(f"data dir {data_dir} is in use by another running portal") from exc
        yield handle
