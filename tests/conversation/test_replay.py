"""Record and replay through the real agent loop and the run modes, with fake tools and a fake
model (no portal, no server)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Self

import pytest

from agent_evals.agent.loop import run_turn
from agent_evals.agent.types import ToolResult
from agent_evals.conversation.cassette import Cassette, load_cassette
from agent_evals.conversation.driver import run_conversation
from agent_evals.conversation.metering import MeteredModels
from agent_evals.conversation.modes import RecordingMode, ReplayingMode, RunMode
from agent_evals.conversation.replay import CassetteDivergence, ReplaySession, StaleCassette
from agent_evals.conversation.users import FixedMessages
from agent_evals.llm.types import ChatResponse
from agent_evals.packs.spoke import SpokePack
from agent_evals.packs.spoke.created_prs import pull_request
from agent_evals.record import AgentInfo, End, RunRecord, ToolCall, Usage

BASE = "http://127.0.0.1:{port}/repos/spokes/pullrequest/{id}"


class Tools:
    """Fake portal tools: validation verdict, PR id and doc text are set per run."""

    def __init__(self, pr_id: int, port: int, valid: bool = True, names: Sequence[str] | None = None) -> None:
        self.pr_id, self.port, self.valid = pr_id, port, valid
        self.names = names or ("validate_spoke_config", "create_spoke_pull_request", "get_pull_request", "get_doc")
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @property
    def specs(self) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": n, "description": n, "parameters": {}}} for n in self.names]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        self.calls.append((name, dict(arguments)))
        if name == "validate_spoke_config":
            value: Any = {"valid": self.valid, "errors": []}
        elif name == "get_doc":
            return ToolResult(value="Error budgets are what a team may spend", text="Error budgets are what a team may spend",
                              is_error=False)
        else:
            value = {"id": self.pr_id, "url": BASE.format(port=self.port, id=self.pr_id), "status": "active"}
        return ToolResult(value=value, text=json.dumps(value), is_error=False)


class Scripted:
    """A model source whose agent model answers from a list of responses."""

    def __init__(self, responses: Sequence[ChatResponse]) -> None:
        self.responses = list(responses)

    def chat_model(self, role, *, model=None, default_model=None):
        return self

    model = "scripted"

    async def complete(self, messages, *, tools=None, temperature=None, **_: Any) -> ChatResponse:
        return self.responses.pop(0)


class LoopAgent:
    """The production loop over fake tools (what the factory's Agent does over MCP)."""

    def __init__(self, mode: RunMode, record: RunRecord, tools: Tools, instructions: str = "sys") -> None:
        self.models = MeteredModels(mode.models, record)
        self.model = self.models.chat_model("agent")
        self.tools = mode.wrap_tools(tools) if mode.wrap_tools else tools
        self.instructions = instructions

    info = AgentInfo("fake", "scripted")

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def respond(self, history, *, on_tool_call=None):
        return await run_turn(model=self.model, tools=self.tools, system_prompt=self.instructions, history=history,
                              temperature=0.2, max_tool_rounds=5, on_tool_call=on_tool_call)


def _calls(*calls: tuple[str, dict[str, Any]]) -> ChatResponse:
    requests = tuple(ToolCall.request(f"c{i}", n, json.dumps(a)) for i, (n, a) in enumerate(calls))
    return ChatResponse(content=None, tool_calls=requests, usage=Usage(5, 5, 10, 1, 0.0))


def _text(text: str) -> ChatResponse:
    return ChatResponse(content=text, usage=Usage(5, 5, 10, 1, 0.0))


SCRIPT = [
    _calls(("validate_spoke_config", {"config": {"name": "x", "priority": 3}})),
    _text("Valid. Create it?"),
    _calls(("create_spoke_pull_request", {"spoke_name": "x", "config": {"name": "x", "priority": 3}})),
    _text("Done: " + BASE.format(port=9000, id=3)),
    _calls(("get_pull_request", {"id": 3}), ("get_doc", {"name": "budgets"})),
    _text("PR 3 is active: " + BASE.format(port=9000, id=3)),
]
MESSAGES = ["copy x", "yes", "is it open?"]
FINGERPRINTS = {"case": {"id": "C01", "prompt": "p"}, "user": {"kind": "user_messages", "definition": "d"}}


def _converse(mode: RunMode, tools: Tools, messages: Sequence[str], instructions: str = "sys") -> RunRecord:
    record = RunRecord(case_id="C01")

    async def run() -> None:
        mode.start(FINGERPRINTS)
        agent = LoopAgent(mode, record, tools, instructions)
        await run_conversation(agent, FixedMessages(messages), record=record,
                               find_side_effect=SpokePack().system.side_effect,
                               on_turn=mode.on_turn, on_user_message=mode.on_user_message)
        mode.finish(record)

    asyncio.run(run())
    return record


def _record(tmp_path: Path) -> Cassette:
    mode = RecordingMode(tmp_path / "C01.json", "C01", models=Scripted(SCRIPT))
    _converse(mode, Tools(pr_id=3, port=9000), MESSAGES)
    return load_cassette(tmp_path / "C01.json")


def _replay(cassette: Cassette, tools: Tools, messages: Sequence[str] = MESSAGES, **kwargs: Any) -> RunRecord:
    return _converse(ReplayingMode(ReplaySession(cassette, "C01.json")), tools, messages, **kwargs)


def test_recording_keeps_responses_tool_calls_messages_end_and_fingerprints(tmp_path: Path) -> None:
    cassette = _record(tmp_path)
    assert [c.role for c in cassette.model_calls] == ["agent"] * 6
    assert [(c.turn, c.name, c.outcome) for c in cassette.record.tool_calls] == [
        (1, "validate_spoke_config", "ok"), (2, "create_spoke_pull_request", "ok"),
        (3, "get_pull_request", "ok"), (3, "get_doc", "ok"),
    ]
    assert [t.user for t in cassette.record.turns] == MESSAGES
    assert cassette.record.end == End("done")
    assert cassette.record.side_effects == [pull_request(3, BASE.format(port=9000, id=3))]
    assert cassette.record.usage["agent"].calls == 6  # metered by role
    assert set(cassette.fingerprints) == {"case", "user", "agent"}
    assert set(cassette.fingerprints["agent"]["tools"]) == set(Tools(0, 0).names)


def test_replay_translates_pr_ids_and_urls_but_not_other_numbers(tmp_path: Path) -> None:
    cassette = _record(tmp_path)
    tools = Tools(pr_id=17, port=8123)
    record = _replay(cassette, tools)

    new_url = BASE.format(port=8123, id=17)
    assert record.end == End("done") and record.side_effects == [pull_request(17, new_url)]
    assert record.turns[1].assistant == "Done: " + new_url
    assert record.turns[2].assistant == "PR 3 is active: " + new_url  # free-text numbers are left alone
    assert tools.calls[2] == ("get_pull_request", {"id": 17})  # an id argument is translated
    assert tools.calls[1][1]["config"] == {"name": "x", "priority": 3}  # a non-id number is not


def test_a_successful_tool_whose_text_starts_with_error_replays_cleanly(tmp_path: Path) -> None:
    record = _replay(_record(tmp_path), Tools(3, 9000))
    assert record.tool_calls[-1].result.startswith("Error budgets") and record.tool_calls[-1].outcome == "ok"


@pytest.mark.parametrize(
    ("tools", "messages", "divergence"),
    [
        (Tools(3, 9000, valid=False), MESSAGES,
         "turn 1, tool call 1 (validate_spoke_config): result /valid = false, the cassette recorded true"),
        (Tools(3, 9000), ["copy x", "no"], "turn 2: the user said 'no', the cassette recorded 'yes'"),
        (Tools(3, 9000), [*MESSAGES, "thanks"],
         "turn 4: the user sent a message the cassette doesn't have (it recorded 3): 'thanks'"),
        (Tools(3, 9000), MESSAGES[:2],
         "the run ended after 2 user message(s) (done), but the cassette has 2 more model response(s)"),
    ],
)
def test_divergences_are_named(tmp_path: Path, tools: Tools, messages: list[str], divergence: str) -> None:
    cassette = _record(tmp_path)
    with pytest.raises(CassetteDivergence) as caught:
        _replay(cassette, tools, messages)
    assert str(caught.value).startswith("cassette C01.json no longer fits the run: ")
    assert divergence in str(caught.value)


def test_a_divergence_in_a_user_message_stops_before_the_tools_run(tmp_path: Path) -> None:
    cassette = _record(tmp_path)
    tools = Tools(3, 9000)
    with pytest.raises(CassetteDivergence):
        _replay(cassette, tools, ["copy x", "no"])
    assert [name for name, _ in tools.calls] == ["validate_spoke_config"]


def test_a_tool_that_now_fails_is_a_divergence_before_the_next_response(tmp_path: Path) -> None:
    class Failing(Tools):
        async def call(self, name, arguments):
            if name == "create_spoke_pull_request":
                self.calls.append((name, dict(arguments)))
                return ToolResult(value="conflict", text="conflict: branch exists", is_error=True)
            return await super().call(name, arguments)

    cassette = _record(tmp_path)
    with pytest.raises(CassetteDivergence, match=r"turn 2, tool call 2 \(create_spoke_pull_request\) succeeded "
                                                 r"when recorded, now failed: conflict: branch exists"):
        _replay(cassette, Failing(3, 9000))


def test_a_call_run_with_other_arguments_names_the_path_and_both_values(tmp_path: Path) -> None:
    """An agent that changes a call's arguments before the tool runs (its code changed since the
    recording): the first divergence is the argument, by JSON path, with both values."""
    session = ReplaySession(_record(tmp_path), "C01.json")
    with pytest.raises(CassetteDivergence) as caught:
        session.check_executed("validate_spoke_config", ToolResult({"valid": True, "errors": []}, "ok", False),
                               {"config": {"name": "x", "priority": 4}})
    assert str(caught.value) == (
        "cassette C01.json no longer fits the run: turn 1, tool call 1 (validate_spoke_config): the run runs the "
        "tool with argument /config/priority = 4, the cassette recorded 3"
    )


def test_running_out_of_a_cassette_recorded_from_a_failed_run_says_so(tmp_path: Path) -> None:
    cassette = _record(tmp_path)
    cassette.model_calls = cassette.model_calls[:3]
    cassette.record.end = End.failed("model", "LLMError: model overloaded")
    with pytest.raises(CassetteDivergence, match=r"has only 3 \(the recording itself ended in an error: "
                                                 r"LLMError: model overloaded\)"):
        _replay(cassette, Tools(3, 9000))


@pytest.mark.parametrize(
    ("tools", "instructions", "change"),
    [
        (Tools(3, 9000), "other instructions", "instructions changed"),
        (Tools(3, 9000, names=("validate_spoke_config", "create_spoke_pull_request", "get_pull_request", "get_doc",
                               "list_spokes")), "sys", "tool list_spokes added"),
        (Tools(3, 9000, names=("validate_spoke_config", "create_spoke_pull_request", "get_pull_request")), "sys",
         "tool get_doc no longer offered"),
    ],
    ids=["instructions", "tool-added", "tool-removed"],
)
def test_a_stale_cassette_is_named_before_any_tool_runs(tmp_path: Path, tools: Tools, instructions: str, change: str) -> None:
    cassette = _record(tmp_path)
    with pytest.raises(StaleCassette, match=f"cassette C01.json is stale: {change}"):
        _replay(cassette, tools, instructions=instructions)
    assert tools.calls == []


def test_a_changed_tool_schema_is_named(tmp_path: Path) -> None:
    class Changed(Tools):
        @property
        def specs(self):
            specs = super().specs
            specs[0]["function"]["parameters"] = {"type": "object", "properties": {"config": {"type": "object"}}}
            return specs

    with pytest.raises(StaleCassette, match="tool validate_spoke_config's parameters changed"):
        _replay(_record(tmp_path), Changed(3, 9000))


def test_a_changed_user_is_stale_up_front(tmp_path: Path) -> None:
    session = ReplaySession(_record(tmp_path), "C01.json")
    with pytest.raises(StaleCassette, match="the fixed user messages changed"):
        ReplayingMode(session).start({**FINGERPRINTS, "user": {"kind": "user_messages", "definition": "other"}})
    with pytest.raises(StaleCassette, match="the user changed from user_messages to simulated_user"):
        ReplayingMode(session).start({**FINGERPRINTS, "user": {"kind": "simulated_user", "definition": "d"}})


def test_allow_stale_replays_and_says_what_changed(tmp_path: Path) -> None:
    mode = ReplayingMode(ReplaySession(_record(tmp_path), "C01.json", allow_stale=True))
    record = _converse(mode, Tools(3, 9000), MESSAGES, instructions="other instructions")
    assert record.end == End("done")
    assert mode.replay_info() == {"cassette": "C01.json", "stale": ["instructions changed"]}
