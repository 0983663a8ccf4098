"""Test helpers: a synchronous MCP client over HTTP, seed data, a valid new spoke, git reads."""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Tool

from agent_evals.packs.spoke.portal.datadir import seed_files
from agent_evals.packs.spoke.portal.rules import Hub
from agent_evals.packs.spoke.portal.snapshot import parse_hub

# A raw MCP initialize request, for tests of the HTTP layer (auth, Host checks).
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


class Mcp:
    """A synchronous face over the MCP client: one short session per call, like an agent turn."""

    def __init__(self, url: str, token: str | None, headers: Mapping[str, str] | None = None) -> None:
        self.url = url.rstrip("/") + "/mcp/"
        self.headers = dict(headers or {})
        if token:
            self.headers["Authorization"] = f"Bearer {token}"

    def _client(self, headers: Mapping[str, str] | None) -> Client:
        http = httpx2.AsyncClient(headers={**self.headers, **(headers or {})}, timeout=30)
        return Client(streamable_http_client(self.url, http_client=http))

    async def acall(
        self, tool: str, arguments: dict[str, Any] | None = None, headers: Mapping[str, str] | None = None
    ) -> CallToolResult:
        async with self._client(headers) as client:
            return await client.call_tool(tool, arguments or {})

    def call(
        self, tool: str, arguments: dict[str, Any] | None = None, headers: Mapping[str, str] | None = None
    ) -> CallToolResult:
        return asyncio.run(self.acall(tool, arguments, headers))

    def ok(
        self, tool: str, arguments: dict[str, Any] | None = None, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Call a tool that must succeed; return its structured result."""
        result = self.call(tool, arguments, headers)
        assert not result.is_error, result.content[0].text
        return json.loads(result.content[0].text)

    def error(self, tool: str, arguments: dict[str, Any] | None = None) -> str:
        """Call a tool that must fail; return the error text."""
        result = self.call(tool, arguments)
        assert result.is_error, f"{tool} unexpectedly succeeded: {result.content[0].text[:300]}"
        return result.content[0].text

    def tools(self) -> list[Tool]:
        async def go() -> list[Tool]:
            async with self._client(None) as client:
                return list((await client.list_tools()).tools)

        return asyncio.run(go())


def seed_spokes() -> dict[str, dict[str, Any]]:
    return {
        path[len("spokes/") : -5]: json.loads(data)
        for path, data in seed_files().items()
        if path.startswith("spokes/")
    }


def seed_hub() -> Hub:
    return parse_hub(json.loads(seed_files()["hub.json"]))


def new_spoke(name: str = "billing-dev-weu", space: str = "10.80.0.0/22", **changes: Any) -> dict[str, Any]:
    """A valid new spoke: a copy of payments-dev-weu moved to a free range."""
    config = copy.deepcopy(seed_spokes()["payments-dev-weu"])
    config.update(name=name, addressSpace=[space])
    base = space.split("/")[0].rsplit(".", 2)[0]  # "10.80"
    third = int(space.split(".")[2])
    config["subnets"][0]["addressPrefix"] = f"{base}.{third}.0/24"
    config["subnets"][1]["addressPrefix"] = f"{base}.{third + 1}.0/26"
    for rule in config["subnets"][0]["nsgRules"]:
        if rule["destinationAddressPrefix"].startswith("10."):
            rule["destinationAddressPrefix"] = config["subnets"][0]["addressPrefix"]
    config["subnets"][1]["nsgRules"][0]["sourceAddressPrefix"] = config["subnets"][0]["addressPrefix"]
    config["subnets"][1]["nsgRules"][0]["destinationAddressPrefix"] = config["subnets"][1]["addressPrefix"]
    config["tags"]["application"] = name.split("-")[0]
    config.update(changes)
    return config


def git(data_dir: Path, *args: str) -> str:
    """Read-only git inside a portal's bare repository."""
    return subprocess.run(
        ["git", "--git-dir", str(data_dir / "spokes.git"), *args], check=True, capture_output=True, text=True
    ).stdout.strip()
