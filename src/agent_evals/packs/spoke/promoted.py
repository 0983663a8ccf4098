"""The fixtures of a case promoted from a production conversation (``agent-evals live promote``).

A spoke the conversation read with ``get_spoke`` that is not in the seed data, and that no pull
request of the conversation created, was on main in production: the case puts it there as a
``spoke`` fixture, copied from a seed spoke with every top-level field replaced by what the tool
returned (so the replay reads the same configuration). A pull request the conversation read but
did not create cannot be re-made from what the conversation saw: the reviewer gets a note.
"""

from __future__ import annotations

import re
from collections.abc import Set
from typing import Any

from agent_evals.packs.spoke.created_prs import created_pull_requests
from agent_evals.authoring import RunRecord

_KEY = re.compile(r"[^A-Za-z0-9_]")


def promoted_fixtures(record: RunRecord, seed: Set[str]) -> tuple[list[dict[str, Any]], list[str]]:
    created = {str((c.arguments or {}).get("spoke_name")) for c in record.tool_calls if c.name == "create_spoke_pull_request"}
    own_prs = {p.id for p in created_pull_requests(record)}
    fixtures: list[dict[str, Any]] = []
    notes: list[str] = []
    seen: set[str] = set()
    for call in record.tool_calls:
        if call.outcome != "ok" or not isinstance(call.result, dict):
            continue
        if call.name == "get_spoke":
            name, config = call.result.get("name"), call.result.get("config")
            if not isinstance(name, str) or name in seed or name in created or name in seen or not isinstance(config, dict):
                continue
            seen.add(name)
            changes = {f"/{key}": value for key, value in config.items() if key != "name"}
            fixtures.append({"spoke": {"key": _KEY.sub("_", name), "copy": sorted(seed)[0], "name": name,
                                       "changes": changes}})
            notes.append(f"spoke {name} was on main in production: the case puts it there as a fixture; "
                         "check that its address space fits the seed data")
        elif call.name == "get_pull_request" and call.result.get("id") not in own_prs:
            notes.append(f"the conversation read pull request {call.result.get('id')} ({call.result.get('status')}, "
                         f"validation {call.result.get('validation_status')}), which the case cannot re-make: "
                         "state it as a pull_request fixture (docs/architecture.md#case-fixtures) and refer to it "
                         "as $fixture.<key>.id")
    return fixtures, notes
