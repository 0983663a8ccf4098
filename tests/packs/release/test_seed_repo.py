"""The seed repository: deterministic, the history the pack's cases rely on, built in one fast-import."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_evals.packs.release.git_command import RepositoryError, git
from agent_evals.packs.release.seed_repo import (
    AGENT_IDENTITY, SEED_MAIN, SeedCommit, SeedHistory, build_seed_repository, seed_history,
)


def test_the_commit_ids_are_the_same_everywhere(seed_repository: Path, tmp_path: Path) -> None:
    again = build_seed_repository(tmp_path / "again")
    assert git(seed_repository, "rev-parse", "main").strip() == SEED_MAIN
    refs = "for-each-ref", "--format=%(refname) %(objectname)"
    assert git(again, *refs) == git(seed_repository, *refs)


def test_the_seed_is_small_to_copy(seed_repository: Path) -> None:
    """A run copies the seed for each conversation: its objects are one pack, and git's sample hooks
    are left out (37 entries instead of 191)."""
    objects = seed_repository / ".git" / "objects"
    assert sorted(p.name for p in objects.iterdir()) == ["info", "pack"]
    assert not (seed_repository / ".git" / "hooks").exists()
    assert git(seed_repository, "count-objects").startswith("0 objects")
    assert len(list(seed_repository.rglob("*"))) < 50


def test_the_history_since_the_last_release(seed_repository: Path) -> None:
    subjects = git(seed_repository, "log", "--format=%s", "v1.4.0..main").splitlines()
    assert subjects == [
        "chore: remove the unused helpers module",
        "feat!: drop support for Python 3.8",
        "fix: report a missing file without a traceback",
        "feat: read standard input when no file is given",
        "chore: update the test runner to pytest 8",
        "docs: describe the --json output in the README",
        "fix: count hyphenated words as one word",
        "feat: add --json output",
    ]
    assert git(seed_repository, "log", "-1", "--format=%s", "v1.4.0").strip() == "Release 1.4.0"
    assert "BREAKING CHANGE: tally now needs Python 3.9" in git(seed_repository, "log", "-1", "--format=%B", "main~1")
    assert git(seed_repository, "branch", "--format=%(refname:short)").split() == [
        "feature/csv-output", "main", "release/1.4"]
    assert git(seed_repository, "merge-base", "release/1.4", "main").strip() == git(
        seed_repository, "rev-parse", "v1.4.0^{commit}").strip()


def test_the_working_copy_is_clean_on_main_with_the_last_release_on_top(seed_repository: Path) -> None:
    assert git(seed_repository, "status", "--porcelain") == ""
    assert git(seed_repository, "symbolic-ref", "--short", "HEAD").strip() == "main"
    changelog = (seed_repository / "CHANGELOG.md").read_text()
    assert changelog.index("## [1.4.0] - 2025-02-17") < changelog.index("## [1.3.0]")
    assert not (seed_repository / "tally" / "helpers.py").exists()  # deleted by the last commit


def test_commits_in_the_copy_are_the_agents(seed_repository: Path) -> None:
    assert git(seed_repository, "config", "user.name").strip() == AGENT_IDENTITY[0]
    assert git(seed_repository, "config", "user.email").strip() == AGENT_IDENTITY[1]


def test_a_bad_history_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "history.yaml"
    bad.write_text("author: {name: a, email: a@b}\ntags: {v1: nowhere}\ncommits:\n"
                   "  - {id: one, message: m, date: 2025-01-01T00:00:00}\n")
    with pytest.raises(ValueError, match="tag v1 names no commit 'nowhere'"):
        seed_history(bad)
    twice = tmp_path / "twice.yaml"
    twice.write_text("author: {name: a, email: a@b}\ncommits:\n  - {id: one, message: m, date: 2025-01-01T00:00:00}\n"
                     "  - {id: one, message: n, date: 2025-01-02T00:00:00}\n")
    with pytest.raises(ValueError, match="commit ids repeat"):
        seed_history(twice)


def test_a_git_failure_names_the_command(tmp_path: Path) -> None:
    with pytest.raises(RepositoryError, match=r"git rev-parse main in .* exited 128"):
        git(tmp_path, "rev-parse", "main")


def test_a_history_that_starts_a_branch_elsewhere(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    day = datetime(2025, 1, 1, tzinfo=timezone.utc)
    history = SeedHistory(("a", "a@example.com"), (
        SeedCommit("one", "first\n", day, {"a.txt": "1\n"}),
        SeedCommit("two", "second\n", day, {"a.txt": "2\n"}),
        SeedCommit("side", "side\n", day, {"b.txt": "b\n", "a.txt": None}, branch="side", start="one"),
    ), {})
    path = build_seed_repository(tmp_path / "r", history)
    assert git(path, "log", "--format=%s", "side").split() == ["side", "first"]
    assert git(path, "ls-tree", "--name-only", "side").split() == ["b.txt"]
    assert (path / "a.txt").read_text() == "2\n"
