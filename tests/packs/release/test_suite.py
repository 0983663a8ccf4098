"""The release-notes agent's configuration (the `servers:` form) and the release-notes suite hold
together: the suite is discovered and ordered, every case's checks parse, every case has a golden
plan that builds, the agent's tool filters name tools the servers have (their generated catalog)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from agent_evals.assertions.registry import kit_checks, pack_of, parse_check_config
from agent_evals.golden.record import build_scripts, suite_cases
from agent_evals.packs.release.tool_catalog import WRITE, catalog, listed_by_the_servers
from agent_evals.suites.discovery import Suite, discover
from tests.conftest import PROJECT_ROOT

AGENT = PROJECT_ROOT / "agent_config" / "agents" / "release-notes"
SUITE = PROJECT_ROOT / "evals" / "release-notes"
# mcp-server-git's tools (mcp_server_git.server.GitTools) and the filesystem server's (2026.8.31)
GIT_TOOLS = ("git_status", "git_diff_unstaged", "git_diff_staged", "git_diff", "git_commit", "git_add", "git_reset",
             "git_log", "git_create_branch", "git_checkout", "git_show", "git_branch")
FILE_TOOLS = ("read_file", "read_text_file", "read_media_file", "read_multiple_files", "write_file", "edit_file",
              "create_directory", "list_directory", "list_directory_with_sizes", "directory_tree", "move_file",
              "search_files", "get_file_info", "list_allowed_directories")


@pytest.fixture(scope="module")
def suite() -> Suite:
    return next(s for s in discover() if s.name == "release-notes")


def test_the_suite_is_discovered_and_ordered() -> None:
    assert "release-notes" in [s.name for s in discover()]
    assert not list(AGENT.glob("*.next.yaml")) and not list(SUITE.glob("*.next.yaml"))
    assert "release-notes" in (PROJECT_ROOT / "evals" / "order.txt").read_text().split()


def test_the_catalog_lists_what_the_servers_offer() -> None:
    assert [t["name"] for t in catalog()] == [*GIT_TOOLS, *FILE_TOOLS]
    assert list(catalog()) == listed_by_the_servers(), f"the servers' tools changed: run `{WRITE}` and commit the file"


def test_the_agent_lists_its_servers_with_tool_filters_the_servers_have() -> None:
    config: dict[str, Any] = yaml.safe_load((AGENT / "agent.yaml").read_text())
    assert "tools" not in config and set(config["servers"]) == {"git", "files"}
    git, files = config["servers"]["git"], config["servers"]["files"]
    assert git["args"] == ["--repository", "${REPO}"] and git["cwd"] == "${REPO}"
    assert files["args"][-1] == "${REPO}"
    assert set(git["tools"]) <= set(GIT_TOOLS) and "git_reset" not in git["tools"]
    assert set(files["tools"]) <= set(FILE_TOOLS) and "move_file" not in files["tools"]
    assert (AGENT / config["instructions"]).is_file()


def test_the_instructions_name_only_tools_the_agent_is_offered() -> None:
    import re

    config = yaml.safe_load((AGENT / "agent.yaml").read_text())
    offered = {tool for server in config["servers"].values() for tool in server["tools"]}
    named = set(re.findall(r"`([a-z_]+)`", (AGENT / config["instructions"]).read_text()))
    assert named & {*GIT_TOOLS, *FILE_TOOLS} <= offered


def test_every_case_check_is_valid_and_of_this_pack_or_the_core(suite: Suite) -> None:
    cases = suite_cases(suite)
    assert [c.id for c in cases] == [f"R{n:02d}" for n in range(1, 13)]
    config = yaml.safe_load(suite.config.read_text())
    defaults = kit_checks(config["defaultTest"]["assert"])
    for case in cases:
        for check in kit_checks(case.asserts) + defaults:
            assert pack_of(check.name) in (None, "release"), (case.id, check.name)
            parse_check_config(check.name, check.config)  # raises ConfigError naming the problem


def test_every_case_has_a_golden_plan_that_builds(suite: Suite) -> None:
    scripts = build_scripts(suite)
    assert len(scripts) == 12
    assert all(script.agent for script in scripts)
