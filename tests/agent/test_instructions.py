"""The portal agents' instructions agree with the portal: every tool, argument, field and value they
name in backticks exists, and every tool they tell the model to use is one it is offered. (An agent
of other servers is checked by its pack's tests: the release-notes agent's by
``tests/packs/release/test_suite.py``.)"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from agent_evals.agent.config import available_agents, load_agent_config
from agent_evals.agent.mcp_servers import HttpServer
from agent_evals.agent.mcp_session import McpSession
from agent_evals.packs.spoke.portal import models
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.schema import load_spoke_schema
from tests.mcp_portal import portal_server

IDENTIFIER_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
# Values from the documentation that no schema spells out (NSG service tags).
DOCUMENTED_VALUES = {"Any"}


@pytest.fixture(scope="module")
def portal_tools(live_portal: PortalProcess) -> dict[str, dict[str, Any]]:
    """The portal's tools as the agent sees them: name → OpenAI function spec."""

    async def listed() -> dict[str, dict[str, Any]]:
        async with McpSession(portal_server(live_portal.url, live_portal.token)) as tools:
            return {s["function"]["name"]: s["function"] for s in tools.specs}

    return asyncio.run(listed())


def schema_words(schema: Any) -> Iterator[str]:
    """Property names and enum values anywhere in a JSON schema."""
    if isinstance(schema, dict):
        yield from schema.get("properties", {})
        yield from (str(v) for v in schema.get("enum", []))
        for value in schema.values():
            yield from schema_words(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from schema_words(item)


def known_words(portal_tools: dict[str, dict[str, Any]]) -> set[str]:
    words = set(portal_tools) | DOCUMENTED_VALUES
    words |= set(schema_words(load_spoke_schema()))
    for spec in portal_tools.values():
        words |= set(schema_words(spec["parameters"]))
    for value in vars(models).values():  # what the tools return
        if isinstance(value, type) and issubclass(value, BaseModel) and value is not BaseModel:
            words |= set(schema_words(value.model_json_schema(by_alias=True)))
            words |= set(value.model_fields)
    for literal in (models.Environment, models.PullRequestStatus, models.ValidationStatus, models.RuleId):
        words |= set(get_args(literal))
    return words


def portal_agents() -> list[str]:
    """The agents whose servers are the portal's (streamable HTTP), not other MCP servers."""
    return [a for a in available_agents() if all(isinstance(s, HttpServer) for s in load_agent_config(a).servers)]


def backticked(text: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", text)


@pytest.mark.parametrize("agent", portal_agents())
def test_instructions_name_only_what_exists(agent: str, portal_tools: dict[str, dict[str, Any]]) -> None:
    config = load_agent_config(agent)
    words = known_words(portal_tools)
    unknown = [
        token
        for token in backticked(config.instructions)
        if IDENTIFIER_PATH.match(token) and not all(part in words for part in token.split("."))
    ]
    assert unknown == [], f"{agent}'s instructions name things the portal does not have: {unknown}"


@pytest.mark.parametrize("agent", portal_agents())
def test_instructions_use_only_the_agents_tools(agent: str, portal_tools: dict[str, dict[str, Any]]) -> None:
    config = load_agent_config(agent)
    named = {token for token in backticked(config.instructions) if token in portal_tools}
    assert named - set(config.tools) == set(), f"{agent}'s instructions use tools it is not offered"
    assert set(config.tools) <= set(portal_tools)


def test_the_check_finds_a_wrong_field_name(portal_tools: dict[str, dict[str, Any]]) -> None:
    words = known_words(portal_tools)
    assert {"privateLink", "privateDnsZones", "spoke_name", "validation_errors", "failed"} <= words
    for wrong in ("privateLink.dnsZones", "costCentre", "spokeName", "approve_pull_request"):
        assert not all(part in words for part in wrong.split(".")), wrong
