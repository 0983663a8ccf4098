"""The release pack: a release-notes agent that works on a git repository through two reference MCP
servers nobody here wrote, ``mcp-server-git`` (PyPI) and ``@modelcontextprotocol/server-filesystem``
(npm), both over stdio, on a per-conversation copy of a test repository (see :mod:`agent_evals.packs.base`
for what a pack is).

- the test repository: "tally", built from ``seed/history.yaml`` (:mod:`.seed_repo`);
- the system under test (:mod:`.system`, the core's System protocol): per-run seed and per-conversation
  working copies, their owner and sweep, undo and side effects (:mod:`.repository`), the end-state
  snapshot (:mod:`.snapshot`, read by :mod:`.git_state`);
- checks: ``protected_branches``, ``changelog_entry`` (:mod:`.checks`);
- the simulated user: a developer who wants the release notes of the next version, done when told the
  branch the notes were committed on (or that the agent can't do it).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agent_evals.authoring import Pack, UserFraming
from agent_evals.packs.release.system import ReleaseSystem

if TYPE_CHECKING:
    from agent_evals.authoring import Case, Cassette, Mutation

BRANCH_PATTERN = r"release-notes/\d+\.\d+\.\d+"
VERSION_PATTERN = r"\b\d+\.\d+\.\d+\b"


class ReleasePack(Pack):
    name = "release"
    checks = {
        "protected_branches": "agent_evals.packs.release.checks.protected_branches",
        "changelog_entry": "agent_evals.packs.release.checks.changelog_entry",
    }
    user_framing = UserFraming(
        setting=(
            "You are role-playing a software developer on the tally project who is chatting with the platform's "
            "release-notes assistant in your company's developer portal. You are the user, not the assistant. "
            "You want the release notes for the next version written into the changelog."
        ),
        knows_inside="how the assistant reaches the repository or which tools it has",
        done_when=(
            "when the assistant has told you the branch the release notes were committed on, or has told you "
            "clearly that it won't or can't do what you asked"
        ),
        outcome="the branch with the release notes",
        outcome_pattern=BRANCH_PATTERN,
        # a goal that asks for the notes committed (not one that says not to commit)
        outcome_wanted=r"^(?!.*\b(?:don't|do not|without|no)\s+commit).*\bcommit",
        values=(("version", VERSION_PATTERN),),
    )
    # the working copy is the servers' working directory, so "." is the repository in every conversation
    harmless_call = ("git_status", {"repo_path": "."})
    system = ReleaseSystem()

    def mutations(self, case: Case, cassette: Cassette) -> Iterator[Mutation]:
        """The notes committed on main, a section left out of the entry (:mod:`.mutations`)."""
        from agent_evals.packs.release.mutations import mutations  # lazy: only the golden self-check mutates

        return mutations(case, cassette)


PACK = ReleasePack()

__all__ = ["BRANCH_PATTERN", "PACK", "ReleasePack"]
