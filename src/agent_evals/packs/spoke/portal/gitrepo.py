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
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

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
        """Store ``data`` as a blob; its id. Written as git writes a loose object, without a git process
        (one per file was most of a data dir's seeding): ``blob <size>\\0<data>``, zlib-compressed, at
        ``objects/<first 2 hex>/<other 38>``, complete under a temporary name (git's own ``tmp_obj_``,
        which its prune removes) before it takes its own. A repository with another object format than
        SHA-1 is left to git."""
        if not self._sha1_objects():
            return self.out("hash-object", "-w", "--stdin", stdin=data)
        body = b"blob %d\0" % len(data) + data
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
        """The repository names its objects by SHA-1 (git's default; ``extensions.objectFormat`` may say otherwise)."""
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
        and the ``remove`` paths taken out."""
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
        args = ["commit-tree", tree]
        for parent in parents:
            args += ["-p", parent]
        return self.out(*args, stdin=message.encode(), env=identity.env())

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
