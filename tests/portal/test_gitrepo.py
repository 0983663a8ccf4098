"""The portal's bare repository: a branch is read from its own file, and answers as git would; the
objects it writes itself (blobs, trees, commits) are those git writes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_evals.packs.spoke.portal.errors import GitError
from agent_evals.packs.spoke.portal.gitrepo import MAIN, GitRepo, Identity


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


NAMES = ["spokes/crm-dev-weu.json", "spokes/a.json", "spokes/a-b.json", "spokes/a0.json", "spokes/a/b.json",
         "a", "a.b", "a-b", "a0", "b/c/d e.txt", "b/c.txt", "b-c", "Zoë/ü.json", "z"]


def _with_an_index(repo: GitRepo, files: dict[str, str], base: str | None, remove: list[str]) -> str:
    return repo._write_tree_with_an_index(files, base, remove=remove)


@pytest.mark.parametrize("seed", range(6))
def test_a_tree_is_the_one_git_writes_from_an_index(tmp_path: Path, seed: int) -> None:
    """Folders and files whose names sort differently as a folder (``a/`` against ``a.b``, ``a-b``, ``a0``),
    added on a base, replaced and removed: the same tree id as read-tree, update-index and write-tree."""
    import random

    rng = random.Random(seed)
    repo = GitRepo.init(tmp_path / "repo.git")
    names = [n for n in NAMES if not (n == "a" and seed % 2)]  # "a" a file, or only a folder's name prefix
    files = {name: repo.write_blob(f"{name} {rng.random()}\n".encode()) for name in rng.sample(names, 8)}
    first = repo.write_tree(files)
    assert first == _with_an_index(repo, files, None, [])
    base = repo.commit(first, [], "base\n")
    changed = {name: repo.write_blob(f"changed {name}\n".encode()) for name in rng.sample(names, 3)}
    gone = rng.sample(sorted(files), 2) + ["not/there.json"]
    second = repo.write_tree(changed, base=base, remove=gone)
    assert second == _with_an_index(repo, changed, base, gone)
    repo.set_branch(MAIN, repo.commit(second, [base], "second\n"), None)
    fsck = subprocess.run(["git", "--git-dir", str(repo.path), "fsck", "--strict", "--no-dangling"],
                          capture_output=True, text=True)
    assert fsck.returncode == 0 and not fsck.stdout + fsck.stderr, fsck.stdout + fsck.stderr


@pytest.mark.parametrize(("before", "added", "kept"), [(["a.txt", "b"], "a.txt/b", ["b"]),
                                                       (["a/b", "a/c/d", "ab"], "a", ["ab"])],
                         ids=["a-file-becomes-a-folder", "a-folder-becomes-a-file"])
def test_a_path_that_takes_another_ones_place_replaces_it_as_git_does(tmp_path: Path, before: list[str],
                                                                       added: str, kept: list[str]) -> None:
    repo = GitRepo.init(tmp_path / "repo.git")
    base = repo.commit(repo.write_tree({name: repo.write_blob(name.encode()) for name in before}), [], "base\n")
    files = {added: repo.write_blob(b"new\n")}
    tree = repo.write_tree(files, base=base)
    assert tree == _with_an_index(repo, files, base, [])
    assert sorted(repo.list_files(repo.commit(tree, [base], "x\n"))) == sorted([*kept, added])


@pytest.mark.parametrize("name", ["Spoke Portal", "Alice.", "  Bob ", "'Carol'", ",Dan;", 'Eve "x', "a.b", "Zoë"])
@pytest.mark.parametrize("message", ["one line\n", "no newline", "title\n\nbody\n\nTrailer: x\n"])
def test_a_commit_is_the_one_git_commit_tree_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    name: str, message: str) -> None:
    import time

    monkeypatch.setenv("TZ", "America/St_Johns")  # -03:30: a negative offset with minutes
    time.tzset()
    try:
        monkeypatch.setattr(time, "time", lambda: 1_700_000_000.7)
        repo = GitRepo.init(tmp_path / "repo.git")
        tree = repo.write_tree({"a.txt": repo.write_blob(b"a\n")})
        first = repo.commit(tree, [], "first\n")
        second = repo.commit(tree, [first], "second\n")
        identity = Identity(name=name, email=f"{name}@portal.invalid")
        native = repo.commit(tree, [first, second, first], message, identity)  # git drops a repeated parent
        dated = {**identity.env(), "GIT_AUTHOR_DATE": "1700000000 -0330", "GIT_COMMITTER_DATE": "1700000000 -0330"}
        by_git = repo.run("commit-tree", tree, "-p", first, "-p", second, stdin=message.encode(),
                          env=dated)[1].decode().strip()
        assert native == by_git, repo.out("cat-file", "commit", native)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_name_that_is_all_crud_is_refused_as_git_refuses_it(repo: GitRepo) -> None:
    tree = repo.write_tree({"a.txt": repo.write_blob(b"a\n")})
    with pytest.raises(GitError, match="empty ident name"):
        repo.commit(tree, [], "x\n", Identity(name="'.'", email="x@portal.invalid"))
