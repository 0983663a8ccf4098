"""The spoke pack: what is specific to the spoke agent's domain (network spoke configurations)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agent_evals.record import PullRequestRef, ToolCall

if TYPE_CHECKING:
    from agent_evals.assertions.registry import CheckRef
    from agent_evals.portal_api import PortalAPI

PR_CREATING_TOOLS = frozenset({"create_spoke_pull_request"})
_PR_URL = re.compile(r"/pullrequest/(\d+)\b")


class SpokePack:
    name = "spoke"

    def find_pull_request(self, call: ToolCall) -> PullRequestRef | None:
        """The ``{id, url}`` of the PR a successful ``create_spoke_pull_request`` made."""
        if call.outcome != "ok" or call.name not in PR_CREATING_TOOLS or not isinstance(call.result, dict):
            return None
        pr_id, url = call.result.get("id"), call.result.get("url")
        if not isinstance(url, str):
            return None
        if isinstance(pr_id, int) and not isinstance(pr_id, bool):
            return PullRequestRef(pr_id, url)
        match = _PR_URL.search(url)
        return PullRequestRef(int(match.group(1)), url) if match else None

    def snapshot_resources(self, api: PortalAPI, checks: Sequence[CheckRef]) -> dict[str, Any]:
        """The portal's schema, and each source spoke the ``input_diff`` checks name (None if it does not exist)."""
        from agent_evals.assertions.input_diff import spoke_resource
        from agent_evals.assertions.spoke_json_valid import SCHEMA_RESOURCE
        from agent_evals.portal_api import PortalNotFound

        resources: dict[str, Any] = {SCHEMA_RESOURCE: _schema(api)}
        for check in checks:
            config = check.config if isinstance(check.config, dict) else {}
            source = config.get("source") if check.name == "input_diff" else None
            if isinstance(source, str) and spoke_resource(source) not in resources:
                try:
                    resources[spoke_resource(source)] = api.get_spoke(source)
                except PortalNotFound:
                    resources[spoke_resource(source)] = None
        return resources


    def preflight(self, check: str, config: Any) -> list[str]:
        """Before a run: every ``input_diff`` source the case names is a spoke of the seed data."""
        source = getattr(config, "source", None) if check == "input_diff" else None
        if isinstance(source, str) and source not in seed_spoke_names():
            from agent_evals.preflight.problems import did_you_mean

            known = sorted(seed_spoke_names())
            return [f"source spoke {source!r} is not in the portal's seed data{did_you_mean(source, known)}"]
        return []


_SCHEMAS: dict[str, Any] = {}


def _schema(api: PortalAPI) -> Any:
    """The portal's schema, read once per portal per worker: it is fixed while a portal runs
    (its settings file is read at start)."""
    if api.base_url not in _SCHEMAS:
        _SCHEMAS[api.base_url] = api.get_schema()
    return _SCHEMAS[api.base_url]


def seed_spoke_names() -> set[str]:
    from importlib import resources

    folder = resources.files("agent_evals.portal").joinpath("seed", "spokes")
    return {entry.name.removesuffix(".json") for entry in folder.iterdir() if entry.name.endswith(".json")}


__all__ = ["PR_CREATING_TOOLS", "SpokePack", "seed_spoke_names"]
