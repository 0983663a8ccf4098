"""The release pack's tests: the seed repository built once per test session, a copy of it per test,
real git changes on the copy, and its snapshot as a run record's metadata."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_evals.packs.release.git_command import git
from agent_evals.packs.release.git_state import read_refs, read_snapshot
from agent_evals.packs.release.seed_repo import build_seed_repository
from agent_evals.packs.release.snapshot import RESOURCE, RefState, RepositorySnapshot
from tests.assertions._assertion_support import metadata, snapshot

# the entry a well-behaved agent writes for the seed's eight commits since 1.4.0
ENTRY_2_0_0 = """## [2.0.0] - 2025-04-07

### Added
- `--json` output.
- Read standard input when no file is given.

### Changed
- **Breaking:** drop support for Python 3.8; tally now needs Python 3.9 or later.

### Fixed
- Count hyphenated words as one word.
- Report a missing file without a traceback.

"""
TOP_ENTRY = "## [1.4.0] - 2025-02-17"


@dataclass
class Repo:
    """A copy of the seed repository, the state it started from, and helpers for real git changes."""

    path: Path
    start: RefState

    def git(self, *args: str) -> str:
        return git(self.path, *args)

    def write(self, file: str, text: str) -> None:
        (self.path / file).parent.mkdir(parents=True, exist_ok=True)
        (self.path / file).write_text(text, encoding="utf-8")

    def changelog(self) -> str:
        return (self.path / "CHANGELOG.md").read_text(encoding="utf-8")

    def add_entry(self, entry: str = ENTRY_2_0_0) -> None:
        self.write("CHANGELOG.md", self.changelog().replace(TOP_ENTRY, entry + TOP_ENTRY, 1))

    def commit_notes(self, branch: str = "release-notes/2.0.0", entry: str = ENTRY_2_0_0) -> None:
        """What the agent does: a new branch from main, the entry, one commit."""
        self.git("checkout", "--quiet", "-b", branch, "main")
        self.add_entry(entry)
        self.git("commit", "--quiet", "-am", "docs: release notes for 2.0.0")

    def snapshot(self) -> RepositorySnapshot:
        return read_snapshot(self.path, self.start)

    def metadata(self) -> dict[str, Any]:
        return metadata(snapshot=snapshot(resources={RESOURCE: self.snapshot().to_dict()}))


@pytest.fixture(scope="session")
def seed_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_seed_repository(tmp_path_factory.mktemp("release-seed") / "tally")


@pytest.fixture
def repo(seed_repository: Path, tmp_path: Path) -> Repo:
    path = tmp_path / "work"
    shutil.copytree(seed_repository, path, symlinks=True)
    return Repo(path, read_refs(path))
