"""Fixtures for the assertion tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_evals.packs.spoke.portal.api import PortalAPI

from ._assertion_support import StubPortal, stub_portal


@pytest.fixture
def portal_stub() -> Iterator[StubPortal]:
    with stub_portal() as stub:
        yield stub


@pytest.fixture
def portal_client(portal_stub: StubPortal) -> PortalAPI:
    return PortalAPI(portal_stub.url, timeout=5)
