"""Eight agents at once: distinct pull requests and a consistent repository."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp.types import CallToolResult

from agent_evals.packs.spoke.portal.process import PortalProcess

from .helpers import Mcp, git, new_spoke

N = 8


def gather(mcp: Mcp, calls: list[tuple[str, dict[str, Any], dict[str, str]]]) -> list[dict[str, Any]]:
    async def run() -> list[CallToolResult]:
        return list(await asyncio.gather(*(mcp.acall(tool, args, headers) for tool, args, headers in calls)))

    results = asyncio.run(run())
    assert not [r.content[0].text for r in results if r.is_error]
    return [json.loads(r.content[0].text) for r in results]


def test_eight_pull_requests_at_once(mcp: Mcp, portal: PortalProcess) -> None:
    configs = [new_spoke(f"team{i}-dev-weu", f"10.{90 + i}.0.0/22") for i in range(N)]
    created = gather(
        mcp,
        [
            (
                "create_spoke_pull_request",
                {
                    "spoke_name": c["name"],
                    "config": c,
                    "title": f"Add {c['name']}",
                    "description": "parallel",
                },
                {"X-Test-Id": f"case-{i}"},
            )
            for i, c in enumerate(configs)
        ],
    )
    assert sorted(pr["id"] for pr in created) == list(range(1, N + 1))
    assert len({pr["source_branch"] for pr in created}) == N
    assert {pr["test_id"]: pr["spoke_name"] for pr in created} == {
        f"case-{i}": c["name"] for i, c in enumerate(configs)
    }
    assert all(pr["validation_status"] == "succeeded" for pr in created)

    data, main = portal.data_dir, git(portal.data_dir, "rev-parse", "main")
    for pr in created:
        assert git(data, "rev-parse", f"{pr['source_branch']}^") == main  # one commit on top of main
        files = git(data, "diff", "--name-only", "main", pr["source_branch"])
        assert files == pr["file"]

    completed = gather(mcp, [("complete_pull_request", {"id": pr["id"]}, {}) for pr in created])
    assert {pr["status"] for pr in completed} == {"completed"}
    assert git(data, "branch", "--list", "pr/*") == ""
    on_main = git(data, "ls-tree", "--name-only", "main", "spokes/").splitlines()
    assert {f"spokes/{c['name']}.json" for c in configs} <= set(on_main)
    git(data, "fsck", "--strict", "--no-dangling")
    spokes = {s["name"] for s in mcp.ok("list_spokes")["spokes"]}
    assert {c["name"] for c in configs} <= spokes
