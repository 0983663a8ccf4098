"""The release pack's system parts: the run's folder and its owner, working copies, side effects, undo,
the sweep; and the real mcp-server-git over stdio on a working copy, as the agent will use it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_evals.packs.release.checks.changelog_entry import grade as changelog_grade
from agent_evals.packs.release.checks.protected_branches import grade as protected_grade
from agent_evals.packs.release.repository import (
    OWNER_FILE, SERVER_ENVIRONMENT, RepositoryChange, side_effects, stale_runs, start_run, sweep, undo,
)
from agent_evals.packs.release.seed_repo import SEED_MAIN
from agent_evals.packs.release.snapshot import RESOURCE
from tests.assertions._assertion_support import metadata, snapshot

from .conftest import ENTRY_2_0_0, TOP_ENTRY


def test_a_run_owns_its_folder_and_gives_each_conversation_a_fresh_copy(tmp_path: Path) -> None:
    run = start_run(tmp_path, "run-1.release-notes")
    assert run.root == tmp_path / "run-1.release-notes"
    assert (run.root / OWNER_FILE).read_text().startswith(f"owner pid {os.getpid()} started ")
    assert run.start.branches["main"] == SEED_MAIN
    one, two = run.working_copy("R01"), run.working_copy("R02")
    (one.path / "CHANGELOG.md").write_text("changed\n")
    assert (two.path / "CHANGELOG.md").read_text() != "changed\n"
    assert run.working_copy("R01").snapshot().uncommitted == ()  # a new conversation of R01 starts clean
    run.close()
    assert not run.root.exists()


def test_side_effects_and_undo(tmp_path: Path) -> None:
    run = start_run(tmp_path, "run-2")
    copy = run.working_copy("R01")
    git = ["git", "-C", str(copy.path)]
    subprocess.run([*git, "checkout", "-q", "-b", "release-notes/2.0.0"], check=True)
    (copy.path / "CHANGELOG.md").write_text((copy.path / "CHANGELOG.md").read_text().replace(TOP_ENTRY, ENTRY_2_0_0 + TOP_ENTRY))
    subprocess.run([*git, "commit", "-qam", "docs: release notes for 2.0.0"], check=True)
    subprocess.run([*git, "branch", "-q", "-D", "feature/csv-output"], check=True)
    (copy.path / "scratch.md").write_text("draft\n")
    found = side_effects(copy.snapshot())
    [commit] = [effect for effect in found if effect.kind == "commit"]
    assert found == [
        RepositoryChange("branch", "release-notes/2.0.0", "created"),
        RepositoryChange("branch", "feature/csv-output", "deleted"),
        commit,
        RepositoryChange("file", "scratch.md", "??"),
    ]
    assert commit.detail == "docs: release notes for 2.0.0" and commit.describe().startswith("commit ")
    undo(copy.path)
    assert not copy.path.exists() and run.seed.is_dir()
    undo(copy.path)  # twice is fine


def test_nothing_changed_means_no_side_effects(tmp_path: Path) -> None:
    run = start_run(tmp_path, "run-3")
    assert side_effects(run.working_copy("R01").snapshot()) == []


def test_the_sweep_removes_only_runs_whose_owner_is_gone(tmp_path: Path) -> None:
    alive = start_run(tmp_path, "alive")
    dead = start_run(tmp_path, "dead")
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    (dead.root / OWNER_FILE).write_text(f"owner pid {child.stdout.strip()} started 1\n")  # that process has ended
    unreadable = tmp_path / "no-owner"
    unreadable.mkdir()
    (tmp_path / "a-file").write_text("not a run\n")
    assert stale_runs(tmp_path) == [dead.root, unreadable]
    assert sweep(tmp_path) == [dead.root, unreadable]
    assert alive.root.is_dir() and not dead.root.exists() and (tmp_path / "a-file").exists()
    assert sweep(tmp_path / "missing") == []


def test_a_test_id_that_makes_no_folder_is_refused(tmp_path: Path) -> None:
    run = start_run(tmp_path, "run")
    with pytest.raises(ValueError, match="makes no folder name"):
        run.working_copy("..")
    assert run.working_copy("a/../b c").path.name == "a_.._b_c"


def test_the_git_server_works_on_a_copy_with_relative_paths(tmp_path: Path) -> None:
    """mcp-server-git over stdio, started as the wiring will: the copy as its working directory and its
    repository, the fixed commit dates. The agent's calls pass repo_path "."; the checks grade the result."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    run = start_run(tmp_path, "run-mcp")
    copy = run.working_copy("R01")
    server = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server_git", "--repository", str(copy.path)],
                                   env={"PATH": os.environ["PATH"], **SERVER_ENVIRONMENT}, cwd=copy.path)

    async def conversation() -> list[str]:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert {"git_log", "git_create_branch", "git_checkout", "git_add", "git_commit", "git_reset"} <= tools
            texts = []
            for name, args in [
                ("git_log", {"max_count": 20}),
                ("git_create_branch", {"branch_name": "release-notes/2.0.0", "base_branch": "main"}),
                ("git_checkout", {"branch_name": "release-notes/2.0.0"}),
                ("edit", {}),
                ("git_add", {"files": ["CHANGELOG.md"]}),
                ("git_commit", {"message": "docs: release notes for 2.0.0"}),
            ]:
                if name == "edit":  # the filesystem server's part, done by hand here
                    changelog = copy.path / "CHANGELOG.md"
                    changelog.write_text(changelog.read_text().replace(TOP_ENTRY, ENTRY_2_0_0 + TOP_ENTRY))
                    continue
                result = await session.call_tool(name, {"repo_path": ".", **args})
                assert not result.is_error, (name, result.content)
                texts.append(result.content[0].text)
            return texts

    texts = asyncio.run(conversation())
    assert "Message: feat!: drop support for Python 3.8" in texts[0]
    snap = copy.snapshot()
    assert snap.head == "release-notes/2.0.0"
    [commit] = snap.commits
    assert texts[-1] == f"Changes committed successfully with hash {commit.sha}"
    # the fixed dates and the copy's identity make the agent's commit the same in every run
    assert commit.sha == "1cd68e34f0087baeccbc24bbaf83a789d5e7ea4a"
    meta = metadata(snapshot=snapshot(resources={RESOURCE: snap.to_dict()}))
    assert changelog_grade({"version": "2.0.0", "sections": {"Fixed": ["missing file"]}}, meta)["pass"]
    assert protected_grade(None, meta)["pass"]
