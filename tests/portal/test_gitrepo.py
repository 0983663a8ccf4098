"""The portal's bare repository: a branch is read from its own file, and answers as git would."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_evals.packs.spoke.portal.gitrepo import MAIN, GitRepo


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo.git")
    tree = repo.write_tree({"a.txt": repo.write_blob(b"a\n")})
    first = repo.commit(tree, [], "first\n")
    repo.set_branch(MAIN, first, None)
    repo.set_branch("pr/1-add", repo.commit(tree, [first], "second\n"), None)
    return repo


def _git_says(repo: GitRepo, ref: str) -> str | None:
    done = subprocess.run(["git", "--git-dir", str(repo.path), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


REFS = ["refs/heads/main", "refs/heads/pr/1-add", "refs/heads/pr", "refs/heads/gone", "refs/heads/../HEAD",
        "refs/heads/", "main", "HEAD"]


@pytest.mark.parametrize("packed", [False, True], ids=["loose", "packed"])
def test_resolve_answers_as_git_does(repo: GitRepo, packed: bool) -> None:
    if packed:  # what `git pack-refs` (or a gc) would leave: no branch file, one packed-refs file
        subprocess.run(["git", "--git-dir", str(repo.path), "pack-refs", "--all"], check=True)
        assert not (repo.path / "refs" / "heads" / "main").exists()
    for ref in REFS:
        assert repo.resolve(ref) == _git_says(repo, ref), ref
    assert repo.resolve("refs/heads/main") is not None and repo.resolve("refs/heads/gone") is None


def test_a_branch_is_read_without_a_git_process(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _git_says(repo, "refs/heads/pr/1-add")

    def no_git(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"git was started: {args}")

    monkeypatch.setattr(subprocess, "run", no_git)
    assert repo.resolve(f"refs/heads/{MAIN}") is not None
    assert repo.resolve("refs/heads/pr/1-add") == expected


def test_a_moved_and_a_deleted_branch_are_seen_at_once(repo: GitRepo) -> None:
    main = repo.resolve("refs/heads/main")
    assert main is not None
    moved = repo.commit(repo.write_tree({"b.txt": repo.write_blob(b"b\n")}, base=main), [main], "third\n")
    repo.set_branch(MAIN, moved, main)
    assert repo.resolve("refs/heads/main") == moved
    assert repo.delete_branch("pr/1-add") and repo.resolve("refs/heads/pr/1-add") is None
    assert not repo.delete_branch("pr/1-add")


@pytest.mark.parametrize("data", [b"", b"a\n", b'{"name": "crm-dev-weu"}\n', bytes(range(256)) * 300],
                         ids=["empty", "line", "json", "binary-77k"])
def test_a_blob_is_the_object_git_would_write(tmp_path: Path, data: bytes) -> None:
    repo = GitRepo.init(tmp_path / "repo.git")
    sha = repo.write_blob(data)
    git = ["git", "--git-dir", str(repo.path)]
    assert sha == subprocess.run([*git, "hash-object", "--stdin"], input=data, capture_output=True,
                                 check=True).stdout.decode().strip()
    assert subprocess.run([*git, "cat-file", "blob", sha], capture_output=True, check=True).stdout == data
    assert repo.write_blob(data) == sha  # again: the object is there already
    repo.set_branch(MAIN, repo.commit(repo.write_tree({"f": sha}), [], "one\n"), None)
    fsck = subprocess.run([*git, "fsck", "--strict", "--no-dangling"], capture_output=True, text=True)
    assert fsck.returncode == 0 and fsck.stdout + fsck.stderr == "", fsck.stdout + fsck.stderr
    assert not list((repo.path / "objects").glob("*/tmp_obj_*"))


def test_a_sha256_repository_gets_its_blobs_from_git(tmp_path: Path) -> None:
    path = tmp_path / "repo.git"
    subprocess.run(["git", "init", "--quiet", "--bare", "--object-format=sha256", str(path)], check=True)
    sha = GitRepo(path).write_blob(b"a\n")
    assert len(sha) == 64
    assert subprocess.run(["git", "--git-dir", str(path), "cat-file", "blob", sha], capture_output=True,
                          check=True).stdout == b"a\n"
