"""Shared fixtures: a real portal process per test module, driven by a real MCP client over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from agent_evals.packs.spoke.portal.process import PortalProcess

from .helpers import Mcp, seed_spokes


@pytest.fixture(scope="session")
def seeds() -> dict[str, dict[str, Any]]:
    return seed_spokes()


@pytest.fixture(scope="module")
def portal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PortalProcess]:
    """A portal with a token, on a fresh data dir, shared by the tests of one module."""
    root = tmp_path_factory.mktemp("portal")
    with PortalProcess(
        data_dir=root / "data", token=PortalProcess.new_token(), log_file=root / "portal.log"
    ) as process:
        yield process


@pytest.fixture(scope="module")
def mcp(portal: PortalProcess) -> Mcp:
    return Mcp(portal.url, portal.token)


@pytest.fixture(scope="module")
def rest(portal: PortalProcess) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {portal.token}"} if portal.token else {}
    with httpx.Client(base_url=portal.url, headers=headers, timeout=30) as client:
        yield client
