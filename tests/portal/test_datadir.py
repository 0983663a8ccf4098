"""The data dir: seeded once, kept, rebuilt when corrupt, never half-written, one portal at a time."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_evals.packs.spoke.portal.datadir import (
    DB_FILE,
    MARKER,
    REPO_DIR,
    ensure_data_dir,
    hold_lock,
    problem,
    reset_data_dir,
)
from agent_evals.packs.spoke.portal.errors import DataDirError
from agent_evals.packs.spoke.portal.gitrepo import INDEX_PREFIX, GitRepo
from agent_evals.packs.spoke.portal.service import Portal

from .helpers import git, new_spoke


def with_one_pr(data_dir: Path) -> None:
    portal = Portal(data_dir)
    portal.create_pull_request("billing-dev-weu", new_spoke(), "Add spoke", "why")
    portal.close()


def test_created_from_the_seed_and_kept(tmp_path: Path, seeds: dict[str, object]) -> None:
    data = ensure_data_dir(tmp_path / "a" / "data")
    assert sorted(p.name for p in data.iterdir()) == sorted([MARKER, REPO_DIR, DB_FILE])
    files = git(data, "ls-tree", "-r", "--name-only", "main").splitlines()
    assert files == ["README.md", "hub.json", *[f"spokes/{n}.json" for n in sorted(seeds)]]
    assert git(data, "log", "--format=%s", "main") == "Seed the landing zone spokes"
    with_one_pr(data)
    ensure_data_dir(data)
    assert Portal(data).list_pull_requests().pull_requests[0].spoke_name == "billing-dev-weu"
    assert not [p for p in data.parent.iterdir() if p.name.startswith(".data.building")]


def _garbage(path: str) -> Callable[[Path], None]:
    return lambda data: (data / path).write_bytes(b"\x00garbage" * 100)


CORRUPTIONS: dict[str, Callable[[Path], None]] = {
    "marker garbage": _garbage(MARKER),
    "marker wrong format": lambda data: (data / MARKER).write_text(json.dumps({"format": 99})),
    "repository deleted": lambda data: shutil.rmtree(data / REPO_DIR),
    "main branch deleted": lambda data: git(data, "update-ref", "-d", "refs/heads/main"),
    "HEAD garbage": _garbage(f"{REPO_DIR}/HEAD"),
    "database garbage": _garbage(DB_FILE),
    "database deleted": lambda data: (data / DB_FILE).unlink(),
}


@pytest.mark.parametrize("corrupt", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_corrupt_dirs_are_moved_aside_and_rebuilt(
    tmp_path: Path, corrupt: Callable[[Path], None], caplog: pytest.LogCaptureFixture
) -> None:
    data = ensure_data_dir(tmp_path / "data")
    with_one_pr(data)
    corrupt(data)
    assert problem(data) is not None
    ensure_data_dir(data)
    assert problem(data) is None
    assert Portal(data).list_pull_requests().pull_requests == []
    (aside,) = [p for p in tmp_path.iterdir() if p.name.startswith("data.corrupt-")]
    assert "is corrupt" in caplog.text and str(aside) in caplog.text


def test_a_foreign_dir_is_never_touched(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "notes.txt").write_text("mine")
    with pytest.raises(DataDirError, match=r"refusing to use .*not a portal data dir \(no portal\.json\)"):
        ensure_data_dir(tmp_path / "data")
    with pytest.raises(DataDirError, match="refusing to reset"):
        reset_data_dir(tmp_path / "data")
    assert (tmp_path / "data" / "notes.txt").read_text() == "mine"
    (tmp_path / "file").write_text("x")
    with pytest.raises(DataDirError, match="is a file, not a directory"):
        ensure_data_dir(tmp_path / "file")


def test_reset_reseeds_and_refuses_while_locked(tmp_path: Path) -> None:
    data = ensure_data_dir(tmp_path / "data")
    with_one_pr(data)
    reset_data_dir(data)
    assert Portal(data).list_pull_requests().pull_requests == []
    assert git(data, "branch", "--list", "pr/*") == ""
    with hold_lock(data):
        with pytest.raises(DataDirError, match="in use by another running portal"):
            reset_data_dir(data)
        with pytest.raises(DataDirError), hold_lock(data):
            pass


def test_a_killed_portals_temporary_index_stays_in_the_repository_and_goes_at_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing a tree uses a temporary git index: in the repository, never in the temporary
    directory, so a portal killed meanwhile leaves it where the next start removes it."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr("tempfile.tempdir", None)
    data = ensure_data_dir(tmp_path / "data")
    repo = GitRepo(data / REPO_DIR)
    repo.write_tree({"a.json": repo.write_blob(b"{}")})
    assert list(temp.iterdir()) == []
    (data / REPO_DIR / f"{INDEX_PREFIX}left-by-a-kill").mkdir()  # as a SIGKILL mid-write leaves it
    ensure_data_dir(data)
    assert list((data / REPO_DIR).glob(f"{INDEX_PREFIX}*")) == []


def test_reset_keeps_the_production_conversations(tmp_path: Path) -> None:
    from agent_evals.live.store import StoreSettings
    from agent_evals.live.store_holder import open_store
    from agent_evals.live.stored import StoredConversation
    from agent_evals.record import AgentInfo

    data = ensure_data_dir(tmp_path / "data")
    store = open_store(StoreSettings(f"sqlite:///{data / 'conversations.sqlite3'}", retention_days=0))
    store.save(StoredConversation.new("kept", "alice", AgentInfo("spoke")))
    store.close()
    reset_data_dir(data)
    reopened = open_store(StoreSettings(f"sqlite:///{data / 'conversations.sqlite3'}", retention_days=0))
    assert reopened.get("kept") is not None
    reopened.close()
