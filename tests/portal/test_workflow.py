"""Merge paths of the PR workflow, in process over a real repository (faster than a server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_evals.packs.spoke.portal.errors import ConflictError
from agent_evals.packs.spoke.portal.gitrepo import GitRepo
from agent_evals.packs.spoke.portal.service import Portal

from .helpers import git, new_spoke


@pytest.fixture
def portal(tmp_path: Path) -> Iterator[Portal]:
    service = Portal(tmp_path / "data")
    yield service
    service.close()


def open_pr(portal: Portal, config: dict[str, Any], title: str = "Add spoke") -> int:
    pr = portal.create_pull_request(config["name"], config, title, "why")
    assert pr.validation_status == "succeeded", pr.validation_errors
    return pr.id


def test_fast_forward_when_main_did_not_move(portal: Portal) -> None:
    pr_id = open_pr(portal, new_spoke())
    head = git(portal.data_dir, "rev-parse", f"pr/{pr_id}-add-spoke")
    portal.complete_pull_request(pr_id)
    assert git(portal.data_dir, "rev-parse", "main") == head


def test_merge_commit_when_main_moved(portal: Portal) -> None:
    first = open_pr(portal, new_spoke("one-dev-weu", "10.80.0.0/22"))
    second = open_pr(portal, new_spoke("two-dev-weu", "10.81.0.0/22"))
    portal.complete_pull_request(first)
    portal.complete_pull_request(second)
    parents = git(portal.data_dir, "log", "-1", "--format=%P", "main").split()
    assert len(parents) == 2
    assert git(portal.data_dir, "log", "-1", "--format=%s", "main") == "Merge pull request 2: Add spoke"
    assert {"one-dev-weu", "two-dev-weu"} <= set(portal.main.current().spokes)
    git(portal.data_dir, "fsck", "--strict")


def test_completing_revalidates_against_the_new_main(portal: Portal) -> None:
    first = open_pr(portal, new_spoke("one-dev-weu", "10.80.0.0/22"))
    second = open_pr(portal, new_spoke("two-dev-weu", "10.80.0.0/22"))  # same free range, both valid now
    portal.complete_pull_request(first)
    with pytest.raises(
        ConflictError,
        match=r"no longer passes validation against the current main .*"
        r"10\.80\.0\.0/22 overlaps spoke 'one-dev-weu'",
    ):
        portal.complete_pull_request(second)
    assert portal.get_pull_request(second).status == "active"


def test_two_changes_to_one_file_conflict(portal: Portal, seeds: dict[str, Any]) -> None:
    configs = [json.loads(json.dumps(seeds["crm-dev-neu"])) for _ in range(2)]
    configs[0]["tags"]["owner"] = "a@contoso.com"
    configs[1]["tags"]["owner"] = "b@contoso.com"
    first, second = (open_pr(portal, c) for c in configs)
    portal.complete_pull_request(first)
    with pytest.raises(ConflictError, match=r"conflicts with main: spokes/crm-dev-neu\.json was changed"):
        portal.complete_pull_request(second)


def test_stray_branches_are_removed_on_start(tmp_path: Path) -> None:
    portal = Portal(tmp_path / "data")
    open_pr(portal, new_spoke())
    portal.close()
    repo = GitRepo(tmp_path / "data" / "spokes.git")
    repo.set_branch("pr/99-left-by-a-crash", repo.resolve("main") or "", None)
    Portal(tmp_path / "data").close()
    assert set(repo.branches("pr/")) == {"pr/1-add-spoke"}


def test_main_snapshot_is_cached_per_commit(portal: Portal) -> None:
    first = portal.main.current()
    assert portal.main.current() is first
    portal.complete_pull_request(open_pr(portal, new_spoke()))
    assert portal.main.current() is not first
