"""A case's fixtures: what it relies on, made through the portal before its conversation.

The suite's pack says what a fixture is (:meth:`~agent_evals.packs.base.Pack.create_fixtures`);
the core makes them with the case's trace headers, records them in the run record
(``fixtures``), lets the user's messages name their values (``$fixture.<key>.<field>``, e.g.
``$fixture.failing.url``), and removes them once the end state is read — the portal records
them with the case's eval and test ids, so the cleanup hook and the run's sweep find them too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_evals.packs import Pack
from agent_evals.record.fixture_refs import fill_references, references

__all__ = ["fill_references", "make_fixtures", "references", "remove_fixtures"]


def make_fixtures(pack: Pack, raw: Any, trace: Mapping[str, str]) -> list[dict[str, Any]]:
    """The case's fixtures, made through the portal (``PORTAL_URL``); raises a ``config`` error
    when the pack or the portal rejects one, a ``portal`` error when the portal does not answer."""
    from agent_evals.packs.spoke.portal.api import PortalAPI

    return pack.create_fixtures(PortalAPI.from_env(), raw, trace)


def remove_fixtures(test_id: str) -> dict[str, Any]:
    """Remove what the portal made for this test's fixtures."""
    from agent_evals.packs.spoke.portal.api import PortalAPI, PortalError

    try:
        return PortalAPI.from_env().remove_fixtures(test_id=test_id)
    except PortalError as exc:  # the run's sweep tries again by eval id
        return {"error": str(exc)}
