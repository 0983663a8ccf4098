"""A bare git repository driven with plumbing commands only.

No working tree exists, so nothing can be half-written: objects are written first
and a ref moves atomically (``update-ref`` with the expected old value) at the end.
Git runs with a fixed identity and without the user's or the system's config, so the
repository behaves the same on every machine. Callers serialise writes (one lock).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_evals.packs.spoke.portal.errors import GitError

log = logging.getLogger(__name__)
MAIN = "main"
ZERO = "0" * 40
_BASE_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}


@dataclass(frozen=True)
class Identity:
    """Author/committer of a commit."""

    name: str = "Spoke Portal"
    email: str = "portal@landing-zone.example"

    def env(self) -> dict[str, str]:
        return {
            "GIT_AUTHOR_NAME": self.name,
            "GIT_AUTHOR_EMAIL": self.email,
            "GIT_COMMITTER_NAME": "Spoke Portal",
            "GIT_COMMITTER_EMAIL": "portal@landing-zone.example",
        }


INDEX_PREFIX = "portal-index-"


class GitRepo:
    """A bare repository at ``path`` (``git init --bare`` via ``init``)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._env = {**os.environ, **_BASE_ENV, "GIT_DIR": str(self.path)}
        self._sha1: bool | None = None

    @classmethod
    def init(cls, path: Path) -> GitRepo:
        subprocess.run(
            ["git", "init", "--quiet", "--bare", "--initial-branch", MAIN, str(path)],
            check=True,
            capture_output=True,
            env={**os.environ, **_BASE_ENV},
        )
        return cls(path)

    def run(
        self,
        *args: str,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        ok_codes: Sequence[int] = (0,),
    ) -> tuple[int, bytes]:
        """Run ``git <args>``; raise ``GitError`` with git's stderr on an unexpected exit code."""
        proc = subprocess.run(
            ["git", *args], input=stdin, capture_output=True, env={**self._env, **(env or {})}, check=False
        )
        if proc.returncode not in ok_codes:
            stderr = proc.stderr.decode("utf-8", "replace").strip()
            raise GitError(f"git {' '.join(args[:3])} failed ({proc.returncode}): {stderr}")
        return proc.returncode, proc.stdout

    def out(self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None) -> str:
        return self.run(*args, stdin=stdin, env=env)[1].decode().strip()

    # --- reading -------------------------------------------------------------------------------

    def resolve(self, ref: str) -> str | None:
        """The commit a ref points to, or ``None`` when it doesn't exist. A branch's own file is read
        directly (the portal reads main before every answer: a git process each time cost more than
        the answer); anything else, a packed or missing branch included, is asked of git."""
        loose = self._loose_branch(ref)
        if loose is not None:
            return loose
        code, out = self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", ok_codes=(0, 1))
        return out.decode().strip() if code == 0 else None

    def _loose_branch(self, ref: str) -> str | None:
        """The commit id in ``refs/heads/…``'s own file (git replaces that file whole, by a rename), or
        ``None`` for anything that is not plainly such a file holding a commit id."""
        parts = ref.split("/")
        if parts[:2] != ["refs", "heads"] or len(parts) < 3 or any(p in ("", ".", "..") for p in parts):
            return None
        try:
            text = (self.path / ref).read_bytes()
        except OSError:
            return None
        sha = text.strip().decode("ascii", "replace")
        return sha if len(sha) == 40 and all(c in "0123456789abcdef" for c in sha) else None

    def list_files(self, commit: str, prefix: str = "") -> dict[str, str]:
        """Path -> blob id of every file under ``prefix`` in ``commit``."""
        args = ["ls-tree", "-r", "-z", commit] + ([prefix] if prefix else [])
        files = {}
        for entry in self.run(*args)[1].split(b"\0"):
            if entry:
                meta, _, path = entry.decode().partition("\t")
                _mode, kind, sha = meta.split()
                if kind == "blob":
                    files[path] = sha
        return files

    def read_blobs(self, shas: Sequence[str]) -> dict[str, bytes]:
        """Contents of several blobs with one ``cat-file --batch``."""
        if not shas:
            return {}
        data = self.run("cat-file", "--batch", stdin="".join(f"{s}\n" for s in shas).encode())[1]
        blobs, pos = {}, 0
        for sha in shas:
            header_end = data.index(b"\n", pos)
            header = data[pos:header_end].decode().split()
            if len(header) != 3:
                raise GitError(f"git cat-file: object {sha} is missing from {self.path}")
            size = header[2]
            start = header_end + 1
            blobs[sha] = data[start : start + int(size)]
            pos = start + int(size) + 1
        return blobs

    def read_file(self, commit: str, path: str) -> bytes | None:
        """Content of ``path`` in ``commit``, or ``None`` when it has no such file."""
        code, out = self.run("cat-file", "blob", f"{commit}:{path}", ok_codes=(0, 128))
        return out if code == 0 else None

    def branches(self, prefix: str) -> dict[str, str]:
        """Branch name -> commit of every branch under ``refs/heads/<prefix>``."""
        out = self.out("for-each-ref", "--format=%(refname:strip=2) %(objectname)", f"refs/heads/{prefix}")
        return dict(line.split(" ", 1) for line in out.splitlines() if line)

    def diff(self, old: str, new: str, path: str) -> str:
        return self.run("diff", "--no-color", "--no-ext-diff", old, new, "--", path)[1].decode(
            "utf-8", "replace"
        )

    # --- writing ------------------------------------------------------------------------------

    def write_blob(self, data: bytes) -> str:
        """Store ``data`` as a blob; its id (see :meth:`_write_object`)."""
        if not self._sha1_objects():
            return self.out("hash-object", "-w", "--stdin", stdin=data)
        return self._write_object(b"blob", data)

    def _write_object(self, kind: bytes, content: bytes) -> str:
        """Store an object as git writes a loose one, without a git process (one per file, tree and commit
        was most of a data dir's seeding and of a PR's CPU): ``<kind> <size>\\0<content>``, zlib-compressed,
        at ``objects/<first 2 hex>/<other 38>``, complete under a temporary name (git's own ``tmp_obj_``,
        which its prune removes) before it takes its own. SHA-1 repositories only (:meth:`_sha1_objects`)."""
        body = b"%s %d\0" % (kind, len(content)) + content
        sha = hashlib.sha1(body).hexdigest()  # noqa: S324 - git's object id, not a security hash
        path = self.path / "objects" / sha[:2] / sha[2:]
        if path.exists():
            return sha
        path.parent.mkdir(exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix="tmp_obj_", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(zlib.compress(body))
            os.chmod(temporary, 0o444)
            os.replace(temporary, path)  # the same bytes if another writer got there first
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return sha

    def _sha1_objects(self) -> bool:
        """The repository names its objects by SHA-1 (git's default; ``extensions.objectFormat`` may say
        otherwise)."""
        if self._sha1 is None:
            try:
                config = (self.path / "config").read_text(encoding="utf-8", errors="replace").lower()
            except OSError:
                config = ""
            self._sha1 = "objectformat" not in config.replace(" ", "")
        return self._sha1

    def write_tree(
        self, files: Mapping[str, str], base: str | None = None, *, remove: Sequence[str] = ()
    ) -> str:
        """A tree: ``base`` commit's tree (if any) with ``files`` (path -> blob id) added or replaced
        and the ``remove`` paths taken out. Its files are read with one ``ls-tree``; the trees are
        written as git's ``write-tree`` writes them (:func:`_tree_content`), without an index."""
        if not self._sha1_objects():
            return self._write_tree_with_an_index(files, base, remove=remove)
        leaves = self._leaves(base) if base is not None else {}
        for path, sha in files.items():
            _make_room(leaves, path)
            leaves[path] = ("100644", sha)
        for path in remove:  # after the files, as git's index applies them: a path in both is removed
            leaves.pop(path, None)
        return self._write_trees(_nest(leaves))

    def _leaves(self, commit: str) -> dict[str, tuple[str, str]]:
        """Path -> (mode, id) of every entry of ``commit``'s tree that is not a tree."""
        leaves = {}
        for entry in self.run("ls-tree", "-r", "-z", "--full-tree", commit)[1].split(b"\0"):
            if entry:
                meta, _, path = entry.decode().partition("\t")
                mode, _kind, sha = meta.split()
                leaves[path] = (mode, sha)
        return leaves

    def _write_trees(self, node: Mapping[str, Any]) -> str:
        entries = {name: ("40000", self._write_trees(child)) if isinstance(child, Mapping) else child
                   for name, child in node.items()}
        return self._write_object(b"tree", _tree_content(entries))

    def _write_tree_with_an_index(
        self, files: Mapping[str, str], base: str | None = None, *, remove: Sequence[str] = ()
    ) -> str:
        # in the repository, not the temporary directory: a portal killed meanwhile leaves it where
        # the next start of the portal removes it (``remove_stale_indexes``)
        with tempfile.TemporaryDirectory(prefix=INDEX_PREFIX, dir=self.path) as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            if base is not None:
                self.run("read-tree", base, env=env)
            info = "".join(f"100644 {sha}\t{path}\n" for path, sha in files.items())
            info += "".join(f"0 {ZERO}\t{path}\n" for path in remove)  # mode 0: remove the entry
            self.run("update-index", "--add", "--index-info", stdin=info.encode(), env=env)
            return self.out("write-tree", env=env)

    def remove_stale_indexes(self) -> int:
        """The temporary indexes of a portal that was killed while it wrote a tree (call at start)."""
        stale = list(self.path.glob(f"{INDEX_PREFIX}*"))
        for folder in stale:
            shutil.rmtree(folder, ignore_errors=True)
        return len(stale)

    def commit(self, tree: str, parents: Sequence[str], message: str, identity: Identity = Identity()) -> str:
        """A commit of ``tree``, as ``git commit-tree`` writes it (now, in the local time zone)."""
        if not self._sha1_objects():
            args = ["commit-tree", tree]
            for parent in parents:
                args += ["-p", parent]
            return self.out(*args, stdin=message.encode(), env=identity.env())
        env = identity.env()
        when = _git_time(time.time())
        author = _ident(env["GIT_AUTHOR_NAME"], env["GIT_AUTHOR_EMAIL"])
        committer = _ident(env["GIT_COMMITTER_NAME"], env["GIT_COMMITTER_EMAIL"])
        parents = list(dict.fromkeys(parents))  # git drops a repeated parent
        head = f"tree {tree}\n" + "".join(f"parent {parent}\n" for parent in parents)
        head += f"author {author} {when}\ncommitter {committer} {when}\n\n"
        return self._write_object(b"commit", (head + message).encode())

    def merge_tree(self, ours: str, theirs: str) -> str | None:
        """The merged tree of two commits, or ``None`` on a conflict (git >= 2.38)."""
        code, out = self.run("merge-tree", "--write-tree", "--no-messages", ours, theirs, ok_codes=(0, 1))
        return out.decode().split("\n", 1)[0].strip() if code == 0 else None

    def set_branch(self, branch: str, new: str, expected_old: str | None) -> None:
        """Move ``branch`` to ``new`` if it still points to ``expected_old`` (``None``: must not exist)."""
        self.run("update-ref", f"refs/heads/{branch}", new, expected_old or ZERO)

    def delete_branch(self, branch: str) -> bool:
        """Delete ``branch``; ``False`` when it was already gone."""
        if self.resolve(f"refs/heads/{branch}") is None:
            return False
        self.run("update-ref", "-d", f"refs/heads/{branch}")
        return True


def _make_room(leaves: dict[str, tuple[str, str]], path: str) -> None:
    """Take out what ``path`` replaces, as git's index does: a file where one of its folders goes, and
    whatever was in a folder of that name."""
    parts = path.split("/")
    for depth in range(1, len(parts)):
        leaves.pop("/".join(parts[:depth]), None)
    for inside in [other for other in leaves if other.startswith(path + "/")]:
        del leaves[inside]


def _nest(leaves: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    """Path -> (mode, id) as nested folders: name -> (mode, id), or name -> the folder's own mapping."""
    root: dict[str, Any] = {}
    for path, leaf in leaves.items():
        *folders, name = path.split("/")
        node = root
        for folder in folders:
            node = node.setdefault(folder, {})
            if not isinstance(node, dict):
                raise GitError(f"{path}: {folder} is a file, not a folder")
        if isinstance(node.get(name), dict):
            raise GitError(f"{path} is a folder, not a file")
        node[name] = leaf
    return root


def _tree_content(entries: Mapping[str, tuple[str, str]]) -> bytes:
    """A tree object's content: ``<mode> <name>\\0<binary id>`` per entry, in git's order (by name's bytes,
    a folder's name compared as if it ended in ``/``)."""
    def key(item: tuple[str, tuple[str, str]]) -> bytes:
        name, (mode, _) = item
        return name.encode() + (b"/" if mode == "40000" else b"")

    return b"".join(f"{mode} {name}".encode() + b"\0" + bytes.fromhex(sha)
                    for name, (mode, sha) in sorted(entries.items(), key=key))


# with every byte up to space: what git trims from the ends of a name or an email
_CRUD = frozenset(b".,:;<>\"\\'")


def _ident(name: str, email: str) -> str:
    """``Name <email>`` as git writes it: crud trimmed from both ends, ``<``, ``>`` and newlines left out."""
    parts = []
    for value in (name, email):
        raw = value.encode()
        start, end = 0, len(raw)
        while start < end and (raw[start] <= 32 or raw[start] in _CRUD):
            start += 1
        while end > start and (raw[end - 1] <= 32 or raw[end - 1] in _CRUD):
            end -= 1
        parts.append(bytes(c for c in raw[start:end] if c not in b"<>\n").decode())
    if not parts[0]:
        raise GitError(f"git: empty ident name (for <{parts[1]}>) not allowed")
    return f"{parts[0]} <{parts[1]}>"


def _git_time(now: float) -> str:
    """``<seconds> <+hhmm>``: a time as a commit records it, in the local time zone (as git does)."""
    seconds = int(now)
    offset = time.localtime(seconds).tm_gmtoff // 60
    sign = "-" if offset < 0 else "+"
    return f"{seconds} {sign}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
