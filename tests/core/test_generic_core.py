"""The generic core knows no domain: it runs with a toy pack of its own (tests/toy_pack.py), and
no core module names the portal's spokes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent_evals.conversation.cassette import Cassette
from agent_evals.conversation.users import SimulatedUser, UserFraming, simulated_user_prompt
from agent_evals.golden.plan import Case, PlanError, scripts_for
from agent_evals.golden.selfcheck import mutations
from agent_evals.packs import GenericPack, PackError, built_in, load_pack
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.provider.run import call_api
from agent_evals.testing.scripted_replies import ChatRequest
from tests.conftest import PROJECT_ROOT
from tests.toy_pack import PACK, TicketsPack

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "agent_evals"
# the generic core: everything but the portal (the system under test), the production agent, and
# the domain packs themselves (packs/<name>/)
DOMAIN = {"portal", "agent", "portal_api.py"}
CORE_FILES = sorted(
    p for p in PACKAGE.rglob("*.py")
    if p.relative_to(PACKAGE).parts[0] not in DOMAIN
    and not (p.relative_to(PACKAGE).parts[0] == "packs" and len(p.relative_to(PACKAGE).parts) > 2)
) + [ROOT / "hooks" / "kit.js", ROOT / "assertions" / "kit.js", *sorted((ROOT / "providers").glob("*.py"))]


def _domain_words() -> re.Pattern[str]:
    from agent_evals.packs.spoke import seed_spoke_names

    names = "|".join(re.escape(n) for n in sorted(seed_spoke_names()))
    return re.compile(rf"spoke|addressSpace|subnet|nsgRule|{names}", re.IGNORECASE)


def test_no_core_module_names_the_spoke_domain() -> None:
    words = _domain_words()
    assert len(CORE_FILES) > 60  # the scan covers the core
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}"
        for path in CORE_FILES
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if words.search(line) and "agent_evals.packs.spoke.portal" not in line  # TEMPORARY: until the System lands
    ]
    assert found == [], "the core names the spoke domain:\n" + "\n".join(found)


def test_the_scan_would_catch_a_domain_word(tmp_path: Path) -> None:
    assert _domain_words().search('PR_TOOL = "create_spoke_pull_request"')
    assert _domain_words().search("copy crm-dev-neu")
    assert not _domain_words().search("open_ticket(queue='billing')")


def test_packs_by_name_by_path_and_bad_ones() -> None:
    assert set(built_in()) >= {"generic", "spoke"}
    assert isinstance(load_pack("generic"), GenericPack)
    assert load_pack("tests.toy_pack:TicketsPack").name == "tickets"
    assert load_pack("tests.toy_pack:PACK") is PACK
    with pytest.raises(PackError, match="unknown pack 'tikets': use one of generic, spoke"):
        load_pack("tikets")
    with pytest.raises(PackError, match="cannot load tests.toy_pack:Nope"):
        load_pack("tests.toy_pack:Nope")
    with pytest.raises(PackError, match="is not an agent_evals.packs.Pack"):
        load_pack("tests.toy_pack:create_agent")


def test_the_simulated_user_is_framed_by_the_pack() -> None:
    toy = simulated_user_prompt("get a laptop", framing=PACK.user_framing)
    assert toy.startswith("You are role-playing an employee who asks the help desk assistant")
    assert "how the help desk works inside" in toy and "the ticket's link" in toy
    generic = simulated_user_prompt("get a laptop")
    for prompt in (toy, generic):
        assert "portal" not in prompt and "pull request" not in prompt
    assert generic.startswith(UserFraming().setting)
    user = SimulatedUser(llm=None, goal="get a laptop", framing=PACK.user_framing)  # type: ignore[arg-type]
    assert user.system_prompt == toy


def _request(*contents: str) -> ChatRequest:
    messages = [{"role": "user", "content": c} for c in contents]
    return ChatRequest(path="/v1/chat/completions", model="m", messages=messages, tools=None, temperature=None,
                       headers={}, query={}, body={})


def test_golden_plans_use_the_packs_placeholders_and_the_cores_find() -> None:
    case = Case(id="T01", first_message_key="[T01] I need a laptop", goal=None, asserts=[])
    entry = {
        "queue": "hardware",
        "agent": [
            {"call": {"open_ticket": {"queue": "$queue", "details": {"$queue_of": "hardware"}}}},
            {"call": {"get_ticket": {"id": {"$find": r"tickets/(\d+)"}}}},
            {"say": "Opened in $queue: $ticket_url"},
        ],
    }
    agent = scripts_for(case, entry, {}, PACK)[0].agent
    first = agent[0].message["tool_calls"][0]["function"]  # type: ignore[union-attr]
    assert first["name"] == "open_ticket"
    assert json.loads(first["arguments"]) == {"queue": "hardware", "details": {"queue": "hardware", "priority": 3}}
    second = agent[1](_request("[T01] I need a laptop", "see https://desk.example/tickets/41"))  # type: ignore[operator]
    assert json.loads(second.message["tool_calls"][0]["function"]["arguments"]) == {"id": 41}
    third = agent[2](_request("a", "b", "c"))  # type: ignore[operator]
    assert third.message["content"] == "Opened in hardware: https://desk.example/tickets/3"
    with pytest.raises(PlanError, match="nothing in the conversation so far matches"):
        agent[1](_request("[T01] no link here"))  # type: ignore[operator]
    with pytest.raises(PlanError, match="T01: unknown shape 'nope'"):
        scripts_for(case, {"shape": "nope"}, {}, PACK)


def _cassette() -> Cassette:
    call = {"id": "c1", "name": "open_ticket", "arguments": '{"queue": "hardware"}'}
    record = {
        "agent_evals": 2, "case_id": "T01", "agent": {"name": "echo", "model": "m"}, "user": {"kind": "user_messages"},
        "turns": 1,
        "transcript": [{"role": "user", "content": "[T01] I need a laptop", "turn": 1, "tool_calls": []},
                       {"role": "assistant", "content": "Opened https://desk.example/tickets/12", "turn": 1,
                        "tool_calls": ["open_ticket"]}],
        "tool_calls": [{"id": "c1", "name": "open_ticket", "arguments": {"queue": "hardware"},
                        "raw_arguments": call["arguments"], "outcome": "ok", "is_error": False,
                        "result": {"id": 12, "url": "https://desk.example/tickets/12"}, "turn": 1, "index": 1,
                        "duration_ms": 1.0}],
        "pull_requests": [], "conversation_end": "done", "ended_by": "user", "final_reply": "Opened",
    }
    calls = [
        {"role": "agent", "response": {"content": None, "tool_calls": [call], "finish_reason": "tool_calls"}},
        {"role": "agent", "response": {"content": "Opened https://desk.example/tickets/12", "tool_calls": [],
                                       "finish_reason": "stop"}},
    ]
    fingerprints = {"agent": {"tools": {"open_ticket": {}, "list_queues": {}}}}
    return Cassette.from_dict({"format": "agent-evals/cassette@2", "case_id": "T01", "fingerprints": fingerprints,
                               "model_calls": calls, "record": record}, where="toy")


def test_the_self_check_mutates_with_the_cores_and_the_packs_mutations() -> None:
    asserts = [
        {"type": "python", "value": "file://../../assertions/tool_not_executed.py", "metric": "forbidden",
         "config": {"tools": ["open_ticket", "close_ticket", "delete_*"]}},
        {"type": "python", "value": "file://../../assertions/conversation.py", "metric": "budget",
         "config": {"max_tool_calls": 2}},
        {"type": "python", "value": "file://../../assertions/reply_grounded.py", "metric": "grounded",
         "config": {"kinds": ["url"]}},
    ]
    case = Case(id="T01", first_message_key=None, goal=None, asserts=asserts)
    made = {m.name: m for m in mutations(case, _cassette(), PACK)}
    assert set(made) == {"forbidden tool close_ticket attempted", "step budget exceeded", "url invented",
                         "ticket said closed"}
    budget = made["step budget exceeded"].cassette.record.tool_calls
    assert [c.name for c in budget] == ["open_ticket", "list_queues", "list_queues"]  # the pack's harmless call
    attempt = made["forbidden tool close_ticket attempted"].cassette.record.tool_calls[-1]
    assert (attempt.name, attempt.outcome) == ("close_ticket", "refused")  # not offered: the loop refuses it
    assert made["url invented"].must_fail == "grounded" and made["ticket said closed"].must_fail == "ticket_open"
    # the generic pack has no harmless call: no step-budget mutation it could replay
    assert "step budget exceeded" not in {m.name for m in mutations(case, _cassette(), GenericPack())}


def _toy_options(**config: Any) -> dict[str, Any]:
    return {"config": {"factory": "tests.toy_pack:create_agent", "pack": "tests.toy_pack:TicketsPack", **config}}


def test_a_check_of_another_pack_is_a_config_error_not_a_failure() -> None:
    test = {"description": "T02 x", "metadata": {"id": "T02"}, "assert": [
        {"type": "python", "value": f"file://{PROJECT_ROOT}/assertions/input_diff.py",
         "config": {"source": "x", "expected_changes": {}}},
    ]}
    answer = call_api("", _toy_options(), {"vars": {"user_messages": ["hi"]}, "test": test})
    assert answer["error"].startswith(
        "[config] assertion 1 (input_diff) is a check of the spoke pack; this suite's pack is tickets"
    )
    assert answer["metadata"]["tool_calls"] == []


def test_fixtures_of_the_toy_pack_reach_the_user_and_the_record(
    live_portal: PortalProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PORTAL_URL", live_portal.url)
    monkeypatch.setenv("PORTAL_TOKEN", live_portal.token or "")
    fixtures = [{"queue": {"key": "hw", "name": "hardware"}}]
    test = {"description": "T03 x", "metadata": {"id": "T03"}, "assert": []}
    vars_ = {"user_messages": ["Please open a ticket in $fixture.hw.name (queue $fixture.hw.id)"], "fixtures": fixtures}
    answer = call_api("", _toy_options(), {"vars": vars_, "test": test, "evaluationId": "eval-toy"})
    assert "error" not in answer, answer.get("error")
    meta = answer["metadata"]
    assert meta["fixtures"] == [{"kind": "queue", "key": "hw", "name": "hardware", "id": 40}]
    assert meta["transcript"][0]["content"] == "Please open a ticket in hardware (queue 40)"
    assert meta["pull_requests"] == [{"id": 12, "url": "https://desk.example/tickets/12"}]  # found by the pack
    assert "fixtures" in meta["cleanup"]

    bad_ref = {**vars_, "user_messages": ["ticket in $fixture.sw.name"]}
    answer = call_api("", _toy_options(), {"vars": bad_ref, "test": test})
    assert answer["error"] == "[config] $fixture.sw.name: the case has no fixture with key 'sw' (keys: hw)"
    answer = call_api("", _toy_options(), {"vars": {**vars_, "fixtures": [{"q": 1}]}, "test": test})
    assert answer["error"].startswith("[config] a tickets fixture is {queue: {key, name}}")
    generic = call_api("", {"config": {"factory": "tests.toy_pack:create_agent"}}, {"vars": vars_, "test": test})
    assert generic["error"] == "[config] pack 'generic' has no fixtures; remove vars.fixtures"


def test_the_toy_pack_is_a_pack() -> None:
    assert isinstance(TicketsPack(), type(GenericPack()).__mro__[1])
