"""A toy domain pack for the core's tests: an agent that opens tickets in a help desk.

It knows nothing of the portal's spokes; the core must work with it alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agent_evals.conversation.users import UserFraming
from agent_evals.golden.plan import Live, PlanValues
from agent_evals.golden.selfcheck import Mutation, _Tape
from agent_evals.packs import FixtureError, Pack
from agent_evals.record import PullRequestRef, ToolCall

TICKET_TOOL = "open_ticket"


class TicketsPack(Pack):
    name = "tickets"
    user_framing = UserFraming(
        setting="You are role-playing an employee who asks the help desk assistant for help.",
        knows_inside="how the help desk works inside",
        done_when="when the assistant has given you the ticket's link",
    )
    harmless_call = ("list_queues", {})

    def find_pull_request(self, call: ToolCall) -> PullRequestRef | None:
        """A ticket is the side effect this domain tracks and cleans up."""
        if call.name == TICKET_TOOL and call.outcome == "ok" and isinstance(call.result, dict):
            return PullRequestRef(int(call.result["id"]), str(call.result["url"]))
        return None

    def fixture_problems(self, fixtures: Any) -> list[str]:
        bad = [f for f in fixtures or [] if not (isinstance(f, Mapping) and set(f) == {"queue"})]
        return [f"a tickets fixture is {{queue: {{key, name}}}}, got {b!r}" for b in bad]

    def create_fixtures(self, api: Any, fixtures: Any, trace: Mapping[str, str]) -> list[dict[str, Any]]:
        if problems := self.fixture_problems(fixtures):
            raise FixtureError("; ".join(problems))
        return [{"kind": "queue", "key": f["queue"]["key"], "name": f["queue"]["name"], "id": 40 + i}
                for i, f in enumerate(fixtures or [])]

    def plan_values(self, case: Any, entry: Mapping[str, Any]) -> PlanValues:
        return PlanValues(
            {"$queue": entry.get("queue", "general"),
             "$ticket_url": Live(lambda request: f"https://desk.example/tickets/{len(request.messages)}")},
            expand=lambda value: {"queue": value["$queue_of"], "priority": 3} if "$queue_of" in value else None,
        )

    def mutations(self, case: Any, cassette: Any) -> Iterator[Mutation]:
        tape = _Tape(cassette)
        response = tape.calls[tape.last_agent_reply()]["response"]
        response["content"] = (response["content"] or "") + " (ticket closed)"
        yield Mutation("ticket said closed", "ticket_open", tape.done())


PACK = TicketsPack()


class EchoAgent:
    """A toy agent (a team's own factory): opens a ticket when asked, and repeats the user's message."""

    def __init__(self, name: str | None, **_: Any) -> None:
        from agent_evals.record import AgentInfo

        self.info = AgentInfo(name=name or "echo", model="none")

    async def __aenter__(self) -> EchoAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def respond(self, history: Any, *, on_tool_call: Any = None) -> Any:
        import json

        from agent_evals.agent.types import AgentReply
        from agent_evals.record import Usage

        said = str(history[-1]["content"])
        calls = []
        if "ticket" in said:
            ticket = {"id": 12, "url": "https://desk.example/tickets/12"}
            calls.append(ToolCall.request("t1", TICKET_TOOL, json.dumps({"title": said})).with_outcome("ok", ticket, 1.0))
            for call in calls:
                if on_tool_call is not None:
                    on_tool_call(call)
        return AgentReply(text=f"You said: {said}", tool_calls=tuple(calls), usage=Usage())


def create_agent(name: str | None = None, **kwargs: Any) -> EchoAgent:
    return EchoAgent(name, **kwargs)
