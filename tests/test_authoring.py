"""agent_evals.authoring, the pack author's surface, and docs/authoring.md's pack run for real.

The page's files are written out of it into a package outside the kit (a temporary folder on the
Python path, named in the suite by dotted path) and run through the kit's provider, preflight and
grading with the toy agent: the pack's check is found and graded, its system gives the end state
and the undo. A pack's check the registry cannot have is one ``config`` line."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import agent_evals.authoring as authoring
from agent_evals.assertions.registry import KitCheckError, check_module, kit_checks, pack_checks
from agent_evals.packs import load_pack
from agent_evals.preflight.suite_checks import check_tests, provider_plans
from agent_evals.provider.run import call_api
from agent_evals.suites.discovery import Suite
from agent_evals.suites.files import load_suite
from tests.conftest import PROJECT_ROOT

PAGE = PROJECT_ROOT / "docs" / "authoring.md"
FILE_LINE = re.compile(r"^# file: (\S+)\n")
TOY_AGENT = "tests.toy_agent:create_agent"


def test_every_public_name_is_there_and_nothing_about_pull_requests() -> None:
    assert len(authoring.__all__) == len(set(authoring.__all__))
    missing = [name for name in authoring.__all__ if not hasattr(authoring, name)]
    assert missing == []
    assert not [name for name in authoring.__all__ if "pull" in name.lower() or name.startswith("_")]
    with pytest.raises(AttributeError, match="has no attribute 'PullRequestRef'"):
        getattr(authoring, "PullRequestRef")  # the spoke pack's kind of side effect, not the kit's


def test_the_surface_loads_no_model_or_mcp_sdk_until_asked() -> None:
    """A check's process imports its pack, hence this module: the agent package (pydantic, its SDKs) waits
    until a pack asks for the agent's configuration."""
    code = ("import sys, agent_evals.authoring as a\n"
            "heavy = lambda: sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'mcp', 'pydantic'})\n"
            "print(heavy(), 'agent_evals.agent' in sys.modules); a.load_agent_config\n"
            "print(heavy(), 'agent_evals.agent' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[] False", "['pydantic'] True"]


# What the names imported on first use load, each asked alone in a fresh process: (name, what it brings).
ON_FIRST_USE = [
    ("Live", "agent_evals.golden", "yaml"),
    ("CassetteTape", "agent_evals.golden", None),
    ("did_you_mean", "agent_evals.suites.problems", None),
    ("ForcedExit", "agent_evals.runner", None),
    ("sweep_stale", "agent_evals.runner", None),
    ("live_routers", "agent_evals.live", "fastapi"),
]


@pytest.mark.parametrize(("name", "package", "sdk"), ON_FIRST_USE, ids=[n for n, _, _ in ON_FIRST_USE])
def test_the_runs_the_golden_plans_and_the_live_routes_wait_until_asked(name: str, package: str,
                                                                        sdk: str | None) -> None:
    """Importing the surface (a check's process does, through its pack) loads none of them nor YAML or FastAPI;
    asking for one loads its module."""
    code = ("import sys, agent_evals.authoring as a\n"
            f"seen = lambda: [{package!r} in sys.modules, {sdk!r} in sys.modules, 'yaml' in sys.modules, "
            "'fastapi' in sys.modules]\n"
            f"print(seen()); getattr(a, {name!r}); print(seen())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    before, after = out.splitlines()
    assert before == "[False, False, False, False]"
    assert after.startswith("[True, True" if sdk else "[True, False")


def test_the_guide_in_brief_names_every_public_name() -> None:
    doc = authoring.__doc__ or ""
    page = PAGE.read_text(encoding="utf-8")
    assert [n for n in authoring.__all__ if f"`{n}`" not in page] == []
    assert "docs/authoring.md" in doc


def _blocks() -> dict[str, str]:
    """The page's files: every fenced block whose first line is ``# file: <path>``."""
    found = {}
    for block in re.findall(r"```(?:python|yaml)\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S):
        if (match := FILE_LINE.match(block)) is not None:
            found[match.group(1)] = block
    return found


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The page's files in a folder outside the kit, its package on the Python path; the suite's
    factory is the toy agent (it opens a ticket titled with the user's message)."""
    for path, text in _blocks().items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.replace("mypackage.agents:create_agent", TOY_AGENT), encoding="utf-8")
    (tmp_path / "ticketkit" / "checks" / "__init__.py").touch()
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m == "ticketkit" or m.startswith("ticketkit.")]:
        del sys.modules[name]


def test_the_page_holds_a_whole_pack() -> None:
    assert set(_blocks()) == {"ticketkit/__init__.py", "ticketkit/system.py", "ticketkit/checks/ticket_opened.py",
                              "evals/desk/assertions/ticket_opened.py", "evals/desk/promptfooconfig.yaml"}
    imports = re.findall(r"^from (agent_evals\S*) import", "\n".join(_blocks().values()), re.M)
    assert set(imports) == {"agent_evals.authoring"}


def _suite(root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    config = yaml.safe_load((root / "evals" / "desk" / "promptfooconfig.yaml").read_text(encoding="utf-8"))
    provider = {**config["providers"][0]["config"], "basePath": str(root / "evals" / "desk")}
    return provider, config["tests"][0]


def _run(provider: dict[str, Any], test: dict[str, Any]) -> dict[str, Any]:
    context = {"vars": test["vars"], "test": test, "evaluationId": "eval-outside"}
    return call_api(test["vars"]["user_messages"][0], {"config": provider}, context)


def test_a_pack_outside_the_kit_has_its_checks_graded_and_its_system_used(outside: Path) -> None:
    provider, test = _suite(outside)
    assert provider["pack"] == "ticketkit:TicketsPack" and "ticketkit" not in pack_checks()  # not a built-in
    answer = _run(provider, test)
    assert "error" not in answer, answer.get("error")
    meta = answer["metadata"]
    assert meta["snapshot"]["resources"] == {  # the pack's system read the end state…
        "tickets": [{"id": 12, "title": "Please open a ticket: my laptop does not start"}]}
    assert meta["cleanup"] == {"closed": [12], "by": "provider"}  # …and undid it
    (check,) = meta["checks"]  # the pack's check, found by the registry and graded in the worker
    assert (check["name"], check["metric"], check["pass"]) == ("ticket_opened", "ticket", True)
    assert check["reason"] == "ticket_opened: a ticket about 'laptop' was opened"
    assert check["grader"]["check"] == "ticket_opened" and check["grader"]["version"] == 1

    # Promptfoo running the suite's assertion file gives the same verdict from the same grade
    module = _load(outside / "evals" / "desk" / "assertions" / "ticket_opened.py")
    ran = module.get_assert(answer["output"], {"providerResponse": answer, "config": test["assert"][0]["config"]})
    assert (ran["pass"], ran["reason"]) == (True, check["reason"])

    printer = {**test, "assert": [{**test["assert"][0], "config": {"about": "printer"}}]}
    (failed,) = _run(provider, printer)["metadata"]["checks"]
    assert failed["pass"] is False
    assert failed["reason"] == ("ticket_opened: expected a ticket about 'printer'; opened: "
                                "['Please open a ticket: my laptop does not start']")

    bad = {**test, "assert": [{**test["assert"][0], "config": {"about": ""}}]}
    error = _run(provider, bad)["error"]
    assert error.startswith("[config] assertion 1 (ticket_opened, metric ticket): config.about must be the words")


def _load(path: Path) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("outside_assertion", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_preflight_finds_the_outside_packs_checks(outside: Path) -> None:
    folder = outside / "evals" / "desk"
    problems: list[Any] = []
    loaded = load_suite(Suite("desk", folder), lenient=True)
    plans = provider_plans(loaded, problems)
    check_tests(loaded.tests, plans, problems, folder)
    assert [p.message for p in problems] == []
    text = (folder / "promptfooconfig.yaml").read_text(encoding="utf-8")
    (folder / "promptfooconfig.yaml").write_text(text.replace("{about: laptop}", "{about: laptop, queue: hw}"))
    loaded = load_suite(Suite("desk", folder), lenient=True)
    check_tests(loaded.tests, provider_plans(loaded, problems), problems, folder)
    assert [p.message for p in problems] == [
        "T01: assertion 1 (ticket_opened): invalid config: unknown config key 'queue'; allowed keys: about"]


def _pack(checks: dict[str, str], name: str = "broken") -> authoring.Pack:
    return type("BrokenPack", (authoring.Pack,), {"name": name, "checks": checks})()


@pytest.mark.parametrize(("checks", "error"), [
    ({"ticket_closed": "ticketkit.checks.ticket_closed"},
     "pack 'broken': check 'ticket_closed' names module 'ticketkit.checks.ticket_closed', which cannot be imported: "
     "No module named 'ticketkit.checks.ticket_closed'"),
    ({"ticket_opened": "ticketkit.system"},
     "pack 'broken': check 'ticket_opened' (module ticketkit.system) has no parse_config, grade, an integer VERSION"),
    ({"tool_sequence": "ticketkit.checks.ticket_opened"},
     "pack 'broken': check 'tool_sequence' has the name of a core check; rename it"),
])
def test_a_check_the_registry_cannot_have_is_one_config_line(outside: Path, checks: dict[str, str], error: str) -> None:
    name = next(iter(checks))
    with pytest.raises(KitCheckError) as raised:
        check_module(name, _pack(checks))
    assert str(raised.value) == error and raised.value.kind == "config"


def test_an_unknown_check_name_is_one_config_line(outside: Path) -> None:
    pack = load_pack("ticketkit:TicketsPack")
    with pytest.raises(KitCheckError, match=r"^unknown kit check 'ticket_closed': not a core check, nor a check of "
                                            r"pack tickets or of a built-in pack; known: tool_sequence, .*ticket_opened"):
        check_module("ticket_closed", pack)
    assertion = {"type": "python", "value": "file://assertions/ticket_opened.py"}
    assert kit_checks([assertion]) == []  # the suite's pack not named: not a kit check (Promptfoo runs the file)
    assert [c.name for c in kit_checks([assertion], pack)] == ["ticket_opened"]


def test_a_suite_whose_packs_check_cannot_be_loaded_errs_before_the_conversation(outside: Path) -> None:
    provider, test = _suite(outside)
    (outside / "ticketkit" / "checks" / "ticket_opened.py").write_text("VERSION = 1\n")  # no parse_config nor grade
    answer = _run(provider, test)
    assert answer["error"] == ("[config] pack 'tickets': check 'ticket_opened' (module ticketkit.checks.ticket_opened) "
                               "has no parse_config, grade")
    assert answer["metadata"]["tool_calls"] == []


def test_a_live_policy_scores_production_conversations_with_the_outside_packs_check(outside: Path) -> None:
    """``agent-evals live``: the policy knows the pack's check, its system reads the end state."""
    from agent_evals.live.policy import load_policy
    from agent_evals.live.scoring import LiveSnapshots, Scorer
    from agent_evals.live.stored import StoredConversation
    from agent_evals.record import AgentInfo, End, ToolCall, Turn

    path = outside / "live-policy.yaml"
    path.write_text("agents:\n  spoke:\n    pack: ticketkit:TicketsPack\n    checks:\n"
                    "      - {check: ticket_opened, metric: ticket, config: {about: laptop}}\n")
    policy, problems = load_policy(path)
    assert problems == [] and policy is not None
    stored = StoredConversation.new("c1", "u1", AgentInfo("spoke", "gpt-4.1"), now=1.0)
    call = ToolCall.request("c1", "open_ticket", '{"title": "laptop broken"}').with_outcome("ok", {"id": 3})
    stored.record.turns.append(Turn("my laptop is broken", "Opened #3.", (call.placed(turn=1, index=1),)))
    stored.record.end = End("done")
    scored = Scorer(policy, snapshots=LiveSnapshots({})).score(stored)
    assert [(r["name"], r["pass"], r["reason"]) for r in scored.results] == [
        ("ticket_opened", True, "ticket_opened: a ticket about 'laptop' was opened")]

    path.write_text(path.read_text().replace("ticket_opened, metric", "ticket_closed, metric"))
    _, problems = load_policy(path)
    assert [p.message for p in problems] == [  # one line, with the pack's checks among the known
        f"agent spoke: unknown check 'ticket_closed'; checks: {', '.join(kit_check_names_of('ticketkit:TicketsPack'))}"
        "; did you mean ticket_opened?"]


def kit_check_names_of(pack: str) -> tuple[str, ...]:
    from agent_evals.assertions.registry import kit_check_names

    return kit_check_names(load_pack(pack))


def test_regrade_grades_the_outside_packs_check_again(outside: Path) -> None:
    """``agent-evals regrade``: a stored row's pack check is graded again, the pack read from the eval's
    provider config (a row of the pack's suite without it keeps its recorded result)."""
    from agent_evals.regrade.command import pack_of_row, packs_of_providers
    from agent_evals.regrade.rows import regrade_row

    provider, test = _suite(outside)
    answer = _run(provider, test)
    (entry,) = answer["metadata"]["checks"]
    today = {**test["assert"][0], "config": {"about": "printer"}}  # the suite's config as it is now
    component = {key: entry[key] for key in ("pass", "score", "reason")} | {"assertion": today}
    row = {"response": answer, "testCase": {**test, "assert": [today]},
           "success": True, "score": 1.0, "failureReason": 0, "provider": {"id": "file://../../providers/agent.py"},
           "gradingResult": {"pass": True, "score": 1.0, "reason": "All assertions passed", "componentResults": [component]},
           "metadata": {}}
    config = {"providers": [{"id": "file://../../providers/agent.py", "config": provider}]}
    pack = pack_of_row(row, packs_of_providers(config))
    assert pack is not None and pack.name == "tickets"
    again = regrade_row(row, pack)  # today's config asks about a printer: the recorded pass becomes a fail
    assert (again.checks, again.before, again.after) == (1, "pass", "fail")
    assert again.row["response"]["metadata"]["checks"][0]["reason"].startswith("ticket_opened: expected a ticket about")
    assert regrade_row(row).checks == 0  # without its pack the row's check is not the kit's: kept as recorded


def test_the_outside_checks_not_form_is_its_get_assert_not(outside: Path) -> None:
    """The kit's hook turns ``not-python`` into the kit's negation only for the kit's own files: a pack
    outside names the not- form as ``python`` on ``assertions/<check>.py:get_assert_not``."""
    provider, test = _suite(outside)
    negated = {**test["assert"][0], "value": "file://assertions/ticket_opened.py:get_assert_not"}
    answer = _run(provider, {**test, "assert": [negated]})
    (check,) = answer["metadata"]["checks"]
    assert (check["name"], check["negated"], check["pass"]) == ("ticket_opened", True, False)
    assert check["reason"].startswith("not-ticket_opened fails: the check passes, which the not- form forbids")
    module = _load(outside / "evals" / "desk" / "assertions" / "ticket_opened.py")
    ran = module.get_assert_not(answer["output"], {"providerResponse": answer, "config": negated["config"]})
    assert (ran["pass"], ran["reason"]) == (False, check["reason"])
