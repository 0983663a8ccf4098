"""The release pack's side effects: what each successful git or filesystem call made."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_evals.packs import load_pack
from agent_evals.record import SideEffect, ToolCall

SHA = "1cd68e34f0087baeccbc24bbaf83a789d5e7ea4a"
COPY = "/srv/data/release/run-1/work/run-1.release-notes--R01_ab"


def _call(name: str, arguments: dict[str, Any], result: object = "", outcome: str = "ok") -> ToolCall:
    return ToolCall.request("c1", name, json.dumps(arguments)).with_outcome(outcome, result)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (_call("git_create_branch", {"repo_path": ".", "branch_name": "release-notes/2.0.0", "base_branch": "main"},
               "Created branch 'release-notes/2.0.0' from 'main'"), SideEffect("branch", "release-notes/2.0.0")),
        (_call("git_commit", {"repo_path": ".", "message": "docs: notes"},
               f"Changes committed successfully with hash {SHA}"), SideEffect("commit", SHA)),
        (_call("write_file", {"path": "NOTES.md", "content": "x"}), SideEffect("file", "NOTES.md")),
        (_call("edit_file", {"path": f"{COPY}/docs/CHANGELOG.md", "edits": []}), SideEffect("file", "docs/CHANGELOG.md")),
        (_call("edit_file", {"path": "./CHANGELOG.md", "edits": [], "dryRun": False}), SideEffect("file", "CHANGELOG.md")),
        (_call("move_file", {"source": "a.md", "destination": "b.md"}), SideEffect("file", "b.md")),
        # nothing made
        (_call("edit_file", {"path": "CHANGELOG.md", "edits": [], "dryRun": True}), None),  # a preview
        (_call("git_create_branch", {"branch_name": "x"}, "branch exists", outcome="tool_error"), None),
        (_call("git_commit", {"message": "m"}, "nothing to commit"), None),  # no hash in the answer
        (_call("write_file", {"path": "   "}), None),
        (_call("git_checkout", {"branch_name": "main"}, "Switched to branch 'main'"), None),  # moved, made nothing
        (_call("read_file", {"path": "CHANGELOG.md"}, "# Changelog"), None),
        (ToolCall.request("c1", "write_file", "{not json").with_outcome("invalid_arguments", "bad"), None),
    ],
)
def test_each_call_names_what_it_made(call: ToolCall, expected: SideEffect | None) -> None:
    assert load_pack("release").system.side_effect(call) == expected
