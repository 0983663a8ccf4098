"""A toy domain pack for the core's tests: an agent that opens tickets in a help desk.

It knows nothing of the portal's spokes; the core must work with it alone. Its system under test
(:class:`TicketsSystem`) is a fake help desk kept in this module: nothing to start, tickets as side
effects, queues as fixtures, what it undid written down in ``DESK`` for the tests to read. Like any
pack, it imports the kit through :mod:`agent_evals.authoring` only (tests/core/test_generic_core.py
checks it); the agent that talks to it is a team's own factory, apart (:mod:`tests.toy_agent`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_evals.authoring import (
    CassetteTape,
    CleanupReport,
    Conversation,
    FixtureError,
    Live,
    Mutation,
    Pack,
    PlanValues,
    Running,
    SideEffect,
    RunRecord,
    Snapshot,
    System,
    SystemPool,
    ToolCall,
    Trace,
    UndoWords,
    UserFraming,
    trace_of_row,
)

TICKET_TOOL = "open_ticket"
DESK_URL = "https://desk.example"


@dataclass
class Desk:
    """The fake help desk's state: tickets open by id with their trace, queues made for cases, undos."""

    tickets: dict[int, Trace] = field(default_factory=dict)
    queues: dict[str, Trace] = field(default_factory=dict)
    undone: list[str] = field(default_factory=list)  # "ticket 12", "queue hw", "eval run-x"

    def undo(self, keep: Any) -> CleanupReport:
        """Close every ticket and remove every queue whose trace ``keep`` rejects."""
        report = CleanupReport(words=(UndoWords("ticket", "closed", "ticket", "#"),))
        for number, trace in list(self.tickets.items()):
            if not keep(trace):
                del self.tickets[number]
                report.undone.append(SideEffect("ticket", str(number)))
                self.undone.append(f"ticket {number}")
        for key, trace in list(self.queues.items()):
            if not keep(trace):
                del self.queues[key]
                report.removed_fixtures.append(f"queue {key}")
                self.undone.append(f"queue {key}")
        return report


DESK = Desk()


class DeskRunning(Running):
    def env(self) -> dict[str, str]:
        return {"DESK_URL": DESK_URL}

    def env_keys(self) -> tuple[str, ...]:
        return ("DESK_URL",)

    def undo_eval(self, eval_id: str) -> CleanupReport:
        DESK.undone.append(f"eval {eval_id}")
        return DESK.undo(lambda trace: trace.eval_id != eval_id)

    def undo_row(self, result: Mapping[str, Any]) -> CleanupReport:
        trace = trace_of_row(result)
        return DESK.undo(lambda t: trace is None or t.test_id != trace.test_id)

    def active(self, eval_id: str) -> list[str]:
        return [f"#{n}" for n, trace in DESK.tickets.items() if trace.eval_id == eval_id]


class DeskPool(SystemPool):
    def __init__(self) -> None:
        self.got: dict[str, Running] = {}

    def get(self, suite: Any, *, shard: Any = None) -> Running:
        self.got[suite.name] = DeskRunning(url=DESK_URL)
        return self.got[suite.name]

    def opened(self, suite: str) -> Running | None:
        return self.got.get(suite)


class DeskConversation(Conversation):
    def create_fixtures(self, fixtures: Any) -> list[dict[str, Any]]:
        if problems := TicketsSystem().fixture_problems(fixtures):
            raise FixtureError("; ".join(problems))
        made = []
        for i, f in enumerate(fixtures or []):
            DESK.queues[f["queue"]["key"]] = self.trace
            made.append({"kind": "queue", "key": f["queue"]["key"], "name": f["queue"]["name"], "id": 40 + i})
        return made

    def snapshot(self, record: RunRecord, checks: Sequence[Any]) -> Snapshot | None:
        opened = record.side_effects_of("ticket")  # the tickets the conversation opened, on the desk
        for ticket in opened:
            DESK.tickets.setdefault(int(ticket.id), self.trace)
        tickets = [{"id": int(t.id), "url": t.url, "status": "open"} for t in opened]
        return Snapshot(DESK_URL, {"tickets": tickets, "queues": sorted(DESK.queues)})

    def undo(self, record: RunRecord, *, fixtures: bool) -> dict[str, Any] | None:
        report = DESK.undo(lambda trace: trace.test_id != self.trace.test_id)
        out: dict[str, Any] = {**report.as_dict(), "by": "provider"}
        if fixtures:
            out["fixtures"] = {"removed": report.removed_fixtures}
        return out


class TicketsSystem(System):
    """A fake help desk: nothing to start, tickets as side effects, queues as fixtures."""

    name = "desk"
    undo_words = "closing this run's tickets"

    def pool(self, run_id: str, log_folder: Path, suites: Sequence[Any], *, starter: Any = None) -> SystemPool:
        return DeskPool()

    def attach(self, env: Mapping[str, str] | None = None) -> Running | None:
        import os

        return DeskRunning(url=DESK_URL) if (os.environ if env is None else env).get("DESK_URL") else None

    def side_effect(self, call: ToolCall) -> SideEffect | None:
        """A ticket is the side effect this domain tracks and cleans up."""
        if call.name == TICKET_TOOL and call.outcome == "ok" and isinstance(call.result, dict):
            return SideEffect("ticket", str(call.result["id"]), str(call.result["url"]))
        return None

    def fixture_problems(self, fixtures: Any) -> list[str]:
        bad = [f for f in fixtures or [] if not (isinstance(f, Mapping) and set(f) == {"queue"})]
        return [f"a tickets fixture is {{queue: {{key, name}}}}, got {b!r}" for b in bad]

    def conversation(self, trace: Trace, env: Mapping[str, str] | None = None) -> Conversation:
        return DeskConversation(trace)


class TicketsPack(Pack):
    name = "tickets"
    user_framing = UserFraming(
        setting="You are role-playing an employee who asks the help desk assistant for help.",
        knows_inside="how the help desk works inside",
        done_when="when the assistant has given you the ticket's link",
    )
    harmless_call = ("list_queues", {})
    system = TicketsSystem()

    def plan_values(self, case: Any, entry: Mapping[str, Any]) -> PlanValues:
        return PlanValues(
            {"$queue": entry.get("queue", "general"),
             "$ticket_url": Live(lambda request: f"https://desk.example/tickets/{len(request.messages)}")},
            expand=lambda value: {"queue": value["$queue_of"], "priority": 3} if "$queue_of" in value else None,
        )

    def mutations(self, case: Any, cassette: Any) -> Iterator[Mutation]:
        tape = CassetteTape(cassette)
        response = tape.calls[tape.last_agent_reply()]["response"]
        response["content"] = (response["content"] or "") + " (ticket closed)"
        yield Mutation("ticket said closed", "ticket_open", tape.done())


PACK = TicketsPack()
