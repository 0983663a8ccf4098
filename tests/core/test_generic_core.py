"""The generic core knows no domain: it runs with a toy pack of its own and the toy's fake system
(tests/toy_pack.py), no core module names the portal's spokes, and none imports the spoke pack or its
portal: the core reaches a system through the pack's ``System`` only."""

from __future__ import annotations

import ast
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
from agent_evals.provider.run import call_api
from agent_evals.record import SideEffect
from agent_evals.testing.scripted_replies import ChatRequest
from tests.conftest import PROJECT_ROOT
from tests.toy_pack import DESK, DESK_URL, PACK, TicketsPack, TicketsSystem

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "agent_evals"
# the generic core: everything but the production agent and the domain packs themselves (packs/<name>/,
# the spoke pack's portal, its system under test, included)
DOMAIN = {"agent"}
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
        if words.search(line)
    ]
    assert found == [], "the core names the spoke domain:\n" + "\n".join(found)


def _imports(path: Path, package: list[str] | None = None) -> list[tuple[int, str]]:
    """Every module a Python file imports (at any level, type-checking blocks included), with its line;
    relative imports resolved against the file's package (``package``, else where it sits)."""
    package = package or ["agent_evals", *path.relative_to(PACKAGE).parent.parts]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            found += [(node.lineno, module)] + [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("agent_evals."):
            found.append((node.lineno, node.value))  # importlib.import_module("…"), resources.files("…")
    return found


PACK_FOLDERS = {d.name for d in (PACKAGE / "packs").iterdir() if (d / "__init__.py").is_file()}


def _reaches_a_pack(module: str) -> bool:
    """``agent_evals.packs.<a pack's folder>…`` (``agent_evals.packs`` itself and ``packs.base`` are the
    interface), or the portal at its old place."""
    parts = module.split(".")
    return (parts[:2] == ["agent_evals", "packs"] and len(parts) > 2 and parts[2] in PACK_FOLDERS) or module.startswith(
        ("agent_evals.portal", "agent_evals.portal_api"))


def test_no_core_module_imports_a_pack_or_its_system() -> None:
    """Outside packs/, no module imports the spoke pack, its portal or its REST client (nor any other
    built-in pack): the core reaches a system through ``Pack.system`` (agent_evals.system)."""
    core = [p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] not in ("packs", *DOMAIN)]
    assert len(core) > 150
    found = [f"{path.relative_to(ROOT)}:{line}: {module}" for path in core for line, module in _imports(path)
             if _reaches_a_pack(module)]
    assert found == [], "core modules import a pack or its system:\n" + "\n".join(found)


def test_the_import_scan_would_catch_a_core_module_importing_the_portal(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"  # as if it were agent_evals/runner/probe.py
    probe.write_text("from agent_evals.packs.spoke.portal.api import PortalAPI\nfrom ..packs.spoke import system\n"
                     "from agent_evals.packs import load_pack\nimport importlib\n"
                     "importlib.import_module('agent_evals.packs.spoke.portal.process')\n")
    reached = [m for _, m in _imports(probe, ["agent_evals", "runner"]) if _reaches_a_pack(m)]
    assert reached == ["agent_evals.packs.spoke.portal.api", "agent_evals.packs.spoke.portal.api.PortalAPI",
                       "agent_evals.packs.spoke", "agent_evals.packs.spoke.system",
                       "agent_evals.packs.spoke.portal.process"]
    assert not _reaches_a_pack("agent_evals.packs") and not _reaches_a_pack("agent_evals.packs.base")


AUTHORING = "agent_evals.authoring"
# The packs held to the authoring surface: every built-in pack (the spoke pack with its portal, the release
# pack, a new one too) and the tests' toy packs.
SURFACE_PACKS = [(path, f"agent_evals.packs.{folder}") for folder in sorted(PACK_FOLDERS)
                 for path in sorted((PACKAGE / "packs" / folder).rglob("*.py"))]
SURFACE_PACKS += [(ROOT / "tests" / "toy_pack.py", "tests"), (ROOT / "tests" / "cases" / "desk_pack.py", "tests")]


def _off_the_surface(path: Path, own: str, package: list[str] | None = None) -> list[str]:
    """The imports of ``agent_evals`` in a pack's file that are neither ``agent_evals.authoring`` nor the
    pack's own folder (``own``), with their line: at any level, type-checking blocks and functions included."""
    package = package or ["agent_evals", *path.relative_to(PACKAGE).parent.parts]
    allowed = (AUTHORING, own)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            found += [(node.lineno, module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("agent_evals."):
            found.append((node.lineno, node.value, None))  # importlib.import_module("…"), a check's module
    return [f"{path.name}:{line}: {module}" + (f".{name}" if name else "") for line, module, name in found
            if module.split(".")[0] == "agent_evals"
            and not any(module == a or module.startswith(f"{a}.") for a in allowed)]


def test_the_packs_import_the_kit_through_the_authoring_surface_only() -> None:
    """Every built-in pack (the spoke pack and its portal, the release pack; a new one too) and the toy packs
    reach the kit through agent_evals.authoring (and their own folder) only."""
    owners = {own for _, own in SURFACE_PACKS}
    assert owners >= {"agent_evals.packs.spoke", "agent_evals.packs.release", "tests"} and len(SURFACE_PACKS) > 60
    assert PACKAGE / "packs" / "spoke" / "portal" / "server.py" in {path for path, _ in SURFACE_PACKS}
    found = [line for path, own in SURFACE_PACKS
             for line in _off_the_surface(path, own, None if path.is_relative_to(PACKAGE) else ["tests"])]
    assert found == [], "a pack imports the kit around agent_evals.authoring:\n" + "\n".join(found)


def test_the_surface_scan_would_catch_a_pack_reaching_around_it(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"  # as if it were agent_evals/packs/release/probe.py
    probe.write_text("from agent_evals.authoring import Pack\nfrom agent_evals.golden.selfcheck import CassetteTape\n"
                     "from agent_evals.packs.release.snapshot import RESOURCE\nfrom .snapshot import RESOURCE\n"
                     "from ..base import Pack\nimport agent_evals.system\n"
                     "from agent_evals.record import PullRequestRef, RunRecord\n"
                     "def f():\n    from agent_evals.cleanup import trace_of_row  # lazy: a hook's\n"
                     "CHECKS = {'x': 'agent_evals.assertions.tool_sequence'}\n")
    found = _off_the_surface(probe, "agent_evals.packs.release", ["agent_evals", "packs", "release"])
    assert found == ["probe.py:2: agent_evals.golden.selfcheck.CassetteTape", "probe.py:5: agent_evals.packs.base.Pack",
                     "probe.py:6: agent_evals.system", "probe.py:7: agent_evals.record.PullRequestRef",
                     "probe.py:7: agent_evals.record.RunRecord",
                     "probe.py:9: agent_evals.cleanup.trace_of_row", "probe.py:10: agent_evals.assertions.tool_sequence"]


def test_the_scan_would_catch_a_domain_word(tmp_path: Path) -> None:
    assert _domain_words().search('PR_TOOL = "create_spoke_pull_request"')
    assert _domain_words().search("copy crm-dev-neu")
    assert not _domain_words().search("open_ticket(queue='billing')")


def test_packs_by_name_by_path_and_bad_ones() -> None:
    assert set(built_in()) >= {"generic", "release", "spoke"}
    assert isinstance(load_pack("generic"), GenericPack)
    assert load_pack("tests.toy_pack:TicketsPack").name == "tickets"
    assert load_pack("tests.toy_pack:PACK") is PACK
    with pytest.raises(PackError, match="unknown pack 'tikets': use one of generic, release, spoke"):
        load_pack("tikets")
    with pytest.raises(PackError, match="cannot load tests.toy_pack:Nope"):
        load_pack("tests.toy_pack:Nope")
    with pytest.raises(PackError, match="is not an agent_evals.packs.Pack"):
        load_pack("tests.toy_pack:TicketsSystem")


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
        "agent_evals": 3, "case_id": "T01", "agent": {"name": "echo", "model": "m"}, "user": {"kind": "user_messages"},
        "turns": 1,
        "transcript": [{"role": "user", "content": "[T01] I need a laptop", "turn": 1, "tool_calls": []},
                       {"role": "assistant", "content": "Opened https://desk.example/tickets/12", "turn": 1,
                        "tool_calls": ["open_ticket"]}],
        "tool_calls": [{"id": "c1", "name": "open_ticket", "arguments": {"queue": "hardware"},
                        "raw_arguments": call["arguments"], "outcome": "ok", "is_error": False,
                        "result": {"id": 12, "url": "https://desk.example/tickets/12"}, "turn": 1, "index": 1,
                        "duration_ms": 1.0}],
        "side_effects": [], "conversation_end": "done", "ended_by": "user", "final_reply": "Opened",
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
    return {"config": {"factory": "tests.toy_agent:create_agent", "pack": "tests.toy_pack:TicketsPack", **config}}


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


def test_the_core_runs_a_case_on_the_toy_system_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """No portal anywhere: the fixtures, the side effect, the snapshot and the undo are the toy system's."""
    for name in ("PORTAL_URL", "PORTAL_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    DESK.undone.clear()
    fixtures = [{"queue": {"key": "hw", "name": "hardware"}}]
    test = {"description": "T03 x", "metadata": {"id": "T03"}, "assert": []}
    vars_ = {"user_messages": ["Please open a ticket in $fixture.hw.name (queue $fixture.hw.id)"], "fixtures": fixtures}
    answer = call_api("", _toy_options(), {"vars": vars_, "test": test, "evaluationId": "eval-toy"})
    assert "error" not in answer, answer.get("error")
    meta = answer["metadata"]
    assert meta["fixtures"] == [{"kind": "queue", "key": "hw", "name": "hardware", "id": 40}]
    assert meta["transcript"][0]["content"] == "Please open a ticket in hardware (queue 40)"
    assert meta["side_effects"] == [{"kind": "ticket", "id": "12", "url": "https://desk.example/tickets/12"}]  # the system's
    assert meta["snapshot"] == {"read_from": "https://desk.example", "resources": {
        "tickets": [{"id": 12, "url": "https://desk.example/tickets/12", "status": "open"}],
        "queues": ["hw"],  # read while the case's queue existed
    }}
    assert meta["cleanup"] == {"undone": [{"kind": "ticket", "id": "12"}], "already_gone": [],
                               "removed_fixtures": ["queue hw"], "summary": "closed 1 ticket(s), removed 1 fixture(s)",
                               "by": "provider", "fixtures": {"removed": ["queue hw"]}}
    assert DESK.undone == ["ticket 12", "queue hw"] and not DESK.tickets and not DESK.queues

    bad_ref = {**vars_, "user_messages": ["ticket in $fixture.sw.name"]}
    answer = call_api("", _toy_options(), {"vars": bad_ref, "test": test})
    assert answer["error"] == "[config] $fixture.sw.name: the case has no fixture with key 'sw' (keys: hw)"
    answer = call_api("", _toy_options(), {"vars": {**vars_, "fixtures": [{"q": 1}]}, "test": test})
    assert answer["error"].startswith("[config] a tickets fixture is {queue: {key, name}}")
    generic = call_api("", {"config": {"factory": "tests.toy_agent:create_agent"}}, {"vars": vars_, "test": test})
    assert generic["error"] == "[config] pack 'generic' has no fixtures; remove vars.fixtures"


def _toy_suite(tmp_path: Path, pack: str = "tests.toy_pack:TicketsPack") -> Any:
    from agent_evals.suites.discovery import Suite

    folder = tmp_path / "desk-suite"
    folder.mkdir()
    (folder / "promptfooconfig.yaml").write_text(
        f"providers:\n  - id: file://../../providers/agent.py\n    config:\n      pack: {pack}\n"
        "tests:\n  - description: T01 x\n    vars: {user_messages: [hi]}\n")
    return Suite(folder.name, folder)


def test_the_runner_and_the_hooks_reach_the_toy_system_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run scope: the runner's systems, the workers' environment, the hooks' undo by eval id and by
    row, the sweep of a run that died and the forced exit's list all go to the toy's system."""
    from agent_evals.cleanup import cleanup_run, cleanup_test, system_from_env
    from agent_evals.suites.manifest import RunManifest, SuiteRun
    from agent_evals.runner.run import _suite_env, _with_system
    from agent_evals.runner.sweep import sweep_stale
    from agent_evals.runner.systems import Systems
    from agent_evals.system import Running

    suite = _toy_suite(tmp_path)
    with Systems("run-toy", tmp_path, [suite]) as systems:
        running = systems.get(suite)
        assert systems.opened(suite.name) is running and isinstance(running, Running)
        env = _suite_env(suite, "run-toy.desk-suite", 2, replay=None, record=None, allow_stale=False,
                         pack=systems.pack_name(suite))
        _with_system(env, running)
    assert env["DESK_URL"] == DESK_URL and env["AGENT_EVALS_PACK"] == "tests.toy_pack:TicketsPack"
    assert "PORTAL_URL" not in env and "PORTAL_TOKEN" not in env
    for name in ("PORTAL_URL", "PORTAL_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DESK_URL", DESK_URL)
    monkeypatch.setenv("AGENT_EVALS_PACK", "tests.toy_pack:TicketsPack")
    system, found = system_from_env()
    assert isinstance(system, TicketsSystem) and found is not None

    from agent_evals.record import Trace

    DESK.undone.clear()
    DESK.tickets.update({7: Trace("run-toy.desk-suite", "T01#a"), 8: Trace("other", "T02#b")})
    assert running.active("run-toy.desk-suite") == ["#7"]
    assert cleanup_run("run-toy.desk-suite").undone == [SideEffect("ticket", "7")] and DESK.tickets.keys() == {8}
    row = {"response": {"metadata": {"trace": {"eval_id": "other", "test_id": "T02#b"}}}}
    assert cleanup_test(row).undone == [SideEffect("ticket", "8")] and not DESK.tickets

    runs = tmp_path / "runs"
    dead = RunManifest("run-dead", "replay", pid=2**22 + 12345)
    dead.suites.append(SuiteRun("desk-suite", portal_url=DESK_URL))
    dead.save(runs / dead.run_id)
    DESK.tickets[9] = Trace("run-dead.desk-suite", "T01#c")
    swept, report = sweep_stale(runs, running)
    assert (swept, report.undone, report.summary()) == (1, [SideEffect("ticket", "9")], "closed 1 ticket(s)")
    assert not DESK.tickets
    assert DESK.undone[-2:] == ["eval run-dead.desk-suite", "ticket 9"]


def test_the_generic_pack_has_a_system_with_nothing_to_start(tmp_path: Path) -> None:
    from agent_evals.runner.systems import Systems
    from agent_evals.system import System

    assert type(GenericPack().system) is System
    suite = _toy_suite(tmp_path, "generic")
    with Systems("run-g", tmp_path, [suite]) as systems:
        running = systems.get(suite)
        assert (running.env(), running.started, running.undo_eval("run-g").as_dict()) == (
            {}, False, {"undone": [], "already_gone": [], "summary": "nothing to undo"})


def test_a_ctrl_c_says_what_the_runs_systems_undo(tmp_path: Path) -> None:
    from agent_evals.runner.interrupts import CLEANING_UP
    from agent_evals.runner.systems import suite_systems, undo_words

    (tmp_path / "toy").mkdir(), (tmp_path / "generic").mkdir()
    toy, generic = _toy_suite(tmp_path / "toy"), _toy_suite(tmp_path / "generic", "generic")
    assert undo_words(suite_systems([toy, generic, toy])) == "closing this run's tickets"
    assert undo_words(suite_systems([generic])) == CLEANING_UP == "cleaning up this run"  # the generic system undoes nothing


def test_the_toy_pack_is_a_pack() -> None:
    assert isinstance(TicketsPack(), type(GenericPack()).__mro__[1])
