"""The snapshot reader on the seed repository after real git changes."""

from __future__ import annotations

from agent_evals.packs.release.snapshot import RepositorySnapshot
from agent_evals.packs.release.seed_repo import SEED_MAIN

from .conftest import Repo


def test_an_untouched_copy_has_no_changes(repo: Repo) -> None:
    snap = repo.snapshot()
    assert snap.start == snap.end
    assert (snap.head, snap.head_sha) == ("main", SEED_MAIN)
    assert (snap.commits, snap.changes, snap.uncommitted) == ((), (), ())
    assert (snap.created(), snap.moved(), snap.deleted(), snap.lost("main")) == ([], [], [], [])


def test_a_commit_on_a_new_branch(repo: Repo) -> None:
    repo.commit_notes()
    snap = repo.snapshot()
    assert snap.created() == ["release-notes/2.0.0"] and snap.moved() == []
    assert snap.head == "release-notes/2.0.0"
    [commit] = snap.commits
    assert commit.subject == "docs: release notes for 2.0.0"
    assert commit.parents == (SEED_MAIN,) and commit.files == ("CHANGELOG.md",)
    assert commit.branches == ("release-notes/2.0.0",)
    [change] = snap.changes
    assert (change.name, change.fork_point, change.files) == ("release-notes/2.0.0", SEED_MAIN, ("CHANGELOG.md",))
    assert "+## [2.0.0] - 2025-04-07" in change.diff
    assert change.after["CHANGELOG.md"] == repo.changelog()
    assert change.before["CHANGELOG.md"] == repo.git("show", "main:CHANGELOG.md")


def test_a_commit_on_main(repo: Repo) -> None:
    repo.add_entry()
    repo.git("commit", "--quiet", "-am", "docs: notes")
    snap = repo.snapshot()
    assert snap.moved() == ["main"] and snap.created() == []
    assert snap.lost("main") == []  # moved forward: nothing dropped
    assert [c.branches for c in snap.commits] == [("main",)]


def test_a_reset_of_main(repo: Repo) -> None:
    repo.git("reset", "--quiet", "--hard", "main~2")
    snap = repo.snapshot()
    assert snap.moved() == ["main"]
    assert snap.lost("main") == list(repo.start.reachable["main"][:2])
    assert snap.commits == ()


def test_an_amend_rewrites_the_branch(repo: Repo) -> None:
    repo.git("commit", "--quiet", "--amend", "-m", "chore: remove helpers")
    snap = repo.snapshot()
    assert snap.lost("main") == [SEED_MAIN]
    assert [c.subject for c in snap.commits] == ["chore: remove helpers"]


def test_a_deleted_branch_and_a_moved_tag(repo: Repo) -> None:
    repo.git("branch", "--quiet", "-D", "feature/csv-output")
    repo.git("tag", "--force", "v1.4.0", "main")
    snap = repo.snapshot()
    assert snap.deleted() == ["feature/csv-output"]
    assert snap.lost("feature/csv-output") == []  # a deleted branch is reported as deleted, not as rewritten
    assert snap.end.tags["v1.4.0"] != snap.start.tags["v1.4.0"]


def test_uncommitted_changes_and_a_detached_head(repo: Repo) -> None:
    repo.git("checkout", "--quiet", "--detach", "main~1")
    repo.add_entry()
    repo.write("notes.txt", "draft\n")
    snap = repo.snapshot()
    assert snap.head is None and snap.head_sha == repo.start.reachable["main"][1]
    assert snap.uncommitted == (" M CHANGELOG.md", "?? notes.txt")


def test_the_snapshot_survives_json(repo: Repo) -> None:
    repo.commit_notes()
    snap = repo.snapshot()
    assert RepositorySnapshot.from_dict(snap.to_dict()) == snap
