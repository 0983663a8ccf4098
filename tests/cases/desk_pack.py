"""A help-desk pack with a case derivation, for the case factory's core tests (no spoke anywhere)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_evals.authoring import CaseDerivation
from tests.toy_pack import TicketsPack

SLA_HOURS = {"1": 4, "2": 8, "3": 24}


def ticket(row: Mapping[str, Any]) -> dict[str, Any]:
    """The queue's display name and the SLA of the row's priority; a priority outside 1-3 makes no case."""
    priority = str(row.get("level") or "")
    if priority not in SLA_HOURS:
        raise ValueError(f"level {priority!r} is not 1, 2 or 3")
    return {"queue_name": str(row["queue"]).title(), "sla_hours": SLA_HOURS[priority],
            "expected_fields": {"queue": row["queue"], "priority": int(priority)}}


class DeskPack(TicketsPack):
    name = "desk"

    def case_derivation(self, name: str) -> CaseDerivation | None:
        return ticket if name == "ticket" else None


DESK = DeskPack()
