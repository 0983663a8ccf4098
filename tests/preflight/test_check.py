"""The preflight check: one broken suite per problem class, each named with its file and line;
several problems are all listed; nothing runs when there is one."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_evals.preflight import preflight
from agent_evals.preflight.command import check_command, report
from agent_evals.suites.promptfoo_args import FlagError, read_flags
from agent_evals.suites.discovery import Suite, discover
from agent_evals.testing.scripted_openai import Reply, ScriptedOpenAIServer
from tests.conftest import PROJECT_ROOT, clean_env

CONFIG = """\
description: a suite
prompts: ["{{ simulated_user.goal }}"]
providers:
  - id: file://../../providers/agent.py
    label: spoke
    config: {agent: spoke, pack: spoke%(extra)s}
defaultTest:
  options: {disableVarExpansion: true}
  assert:
    - type: python
      value: file://../../assertions/tool_not_executed.py
      metric: forbidden_tools
      config: {tools: [complete_pull_request]}
tests: file://cases/*.yaml
"""

CASE = """\
- description: C01 copy
  metadata: {id: C01, group: copy, priority: smoke}
  vars:
    simulated_user:
      goal: Get a copy of crm-dev-neu
  assert:
    - type: python
      value: file://../../assertions/tool_sequence.py
      metric: tool_sequence
      config: {expected: [get_spoke, validate_spoke_config], mode: in_order}
"""


def link_project_files(root: Path) -> None:
    """What the suites' ``file://../../`` paths name, linked from the project (as a copy of evals/ would need)."""
    for shared in ("assertions", "providers", "hooks"):
        if not (root / shared).exists():
            (root / shared).symlink_to(PROJECT_ROOT / shared)


def make_suite(tmp_path: Path, case: str = CASE, extra: str = "", name: str = "s1") -> Suite:
    folder = tmp_path / "evals" / name
    (folder / "cases").mkdir(parents=True)
    link_project_files(tmp_path)
    (folder / "promptfooconfig.yaml").write_text(CONFIG % {"extra": extra})
    (folder / "cases" / "a.yaml").write_text(textwrap.dedent(case))
    return Suite(name, folder)


def problems(suite: Suite, *args: str, replay: str | None = "golden-skip", **kwargs: object) -> list[str]:
    result = preflight([suite], read_flags(list(args)), replay=None if replay == "golden-skip" else replay,
                       offline=True, **kwargs)  # type: ignore[arg-type]
    return [str(p) for p in result.problems if "role has no model" not in str(p)]


@pytest.fixture(autouse=True)
def _here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # problem locations are shown relative to the working directory
    for name in ("PORTAL_URL", "PORTAL_TOKEN", "OPENAI_BASE_URL", "OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT",
                 "AGENT_MODEL", "USER_MODEL", "JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_a_good_suite_has_no_problem(tmp_path: Path) -> None:
    assert problems(make_suite(tmp_path)) == []


def test_the_real_suites_pass_for_a_replay() -> None:
    result = preflight(discover(), read_flags([]), replay="golden")
    assert result.ok, report(result, discover())
    assert sum(result.cases(s.name) or 0 for s in discover()) == 54 + 48  # spoke-create-variants: 48 generated


@pytest.mark.parametrize(
    ("case", "extra", "expected"),
    [
        pytest.param(CASE.replace("metric: tool_sequence", "metric: [unclosed"), "",
                     "evals/s1/cases/a.yaml:10: YAML syntax error: while parsing a flow sequence expected ',' or ']', "
                     "but got ':'",
                     id="yaml"),
        pytest.param(CASE, ", agnet: spoke",
                     "evals/s1/cases/a.yaml:1: C01: bad provider configuration: agnet: Extra inputs are not permitted "
                     "(got 'spoke')",
                     id="provider key"),
        pytest.param(CASE.replace("goal: Get a copy of crm-dev-neu", "persona: terse"), "",
                     "evals/s1/cases/a.yaml:1: C01: bad provider configuration: simulated_user: Value error, "
                     "simulated_user needs a 'goal' (or a 'class' for a custom simulator)", id="no goal"),
        pytest.param(CASE.replace("  vars:\n", "  vars:\n    max_turns: 0\n"), "",
                     "evals/s1/cases/a.yaml:1: C01: bad provider configuration: max_turns: Input should be greater than "
                     "or equal to 1 (got 0)", id="max_turns 0"),
        pytest.param(CASE.replace("goal: Get a copy of crm-dev-neu", "class: nopkg.users:Someone"), "",
                     "evals/s1/cases/a.yaml:1: C01: simulator class 'nopkg.users:Someone': cannot import 'nopkg.users': "
                     "No module named 'nopkg'", id="user class"),
        pytest.param(CASE.replace("mode: in_order", "mod: in_order"), "",
                     "evals/s1/cases/a.yaml:7: C01: assertion 2 (tool_sequence): invalid config: unknown config key "
                     "'mod'; allowed keys: expected, mode, ignore", id="config typo"),
        pytest.param(CASE.replace("validate_spoke_config]", "validate_spoke_cfg]"), "",
                     "evals/s1/cases/a.yaml:7: C01: assertion 2 (tool_sequence): tool 'validate_spoke_cfg' is not one of "
                     "the tools agent 'spoke' is offered (list_spokes, get_spoke, get_spoke_schema, validate_spoke_config, "
                     "create_spoke_pull_request, get_pull_request, list_pull_requests, search_docs, get_doc); did you "
                     "mean validate_spoke_config?", id="tool name"),
        pytest.param(CASE.replace("      metric: tool_sequence\n", ""), "",
                     "evals/s1/cases/a.yaml:7: C01: assertion 2 (tool_sequence): no metric; add `metric: <name>` so its "
                     "score has a name in the viewer and the report", id="no metric"),
        pytest.param(CASE + "    - {type: python, value: file://../../assertions/expected_statements.py, metric: s,\n"
                            "       config: {statements: []}}\n", "",
                     "evals/s1/cases/a.yaml:11: C01: assertion 3 (expected_statements): invalid config: "
                     "config.statements must not be empty: give a list of short statements", id="empty statements"),
        pytest.param(CASE + "    - {type: python, value: file://../../assertions/argument_match.py, metric: reads,\n"
                            "       config: {tool: get_pull_request, args: {id: $fixture.failing.id}}}\n", "",
                     "evals/s1/cases/a.yaml:1: C01: $fixture.failing.id: the case has no fixture with key 'failing' "
                     "(keys: none)", id="fixture reference in a check"),
        pytest.param(CASE.replace("assertions/tool_sequence.py", "assertions/no_such_check.py"), "",
                     "evals/s1/cases/a.yaml:7: C01: assertion 2 (python): file://../../assertions/no_such_check.py "
                     "names no file (assertions/no_such_check.py does not exist)",
                     id="missing check file"),
        pytest.param(CASE.replace("assertions/tool_sequence.py", "assertions/tool_sequense.py"), "",
                     "evals/s1/cases/a.yaml:7: C01: assertion 2 (python): file://../../assertions/tool_sequense.py "
                     "names no file (assertions/tool_sequense.py does not exist); did "
                     "you mean tool_sequence.py?",
                     id="misspelled check file"),
        pytest.param(CASE.replace("- type: python", "- type: pythonn"), "",
                     "evals/s1/cases/a.yaml:7: C01: assertion 2 (pythonn): unknown assertion type 'pythonn'; did you "
                     "mean python?", id="unknown assertion type"),
        pytest.param(CASE.replace("C01, group", "C01 , group").replace("metadata: {id: C01 ,", "metadata: {"), "",
                     "evals/s1/cases/a.yaml:1: C01 copy: no metadata.id (the case id the report and cassettes use)",
                     id="no id"),
    ],
)
def test_each_problem_is_one_line_with_file_and_line(tmp_path: Path, case: str, extra: str, expected: str) -> None:
    found = problems(make_suite(tmp_path, case, extra))
    assert found == [expected]


def test_unknown_agent_and_pack_are_named_at_the_provider(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    config = suite.config.read_text().replace("agent: spoke, pack: spoke", "agent: nope, pack: spokes")
    suite.config.write_text(config)
    found = problems(suite)
    assert found[0].startswith("evals/s1/promptfooconfig.yaml:4: provider spoke: unknown agent 'nope'")
    assert found[1].startswith("evals/s1/promptfooconfig.yaml:4: provider spoke: unknown pack 'spokes'")


SEVERAL = CASE + """\
    - type: python
      value: file://../../assertions/input_diff.py
      metric: input_diff
      config: {source: crm-dev-nue, expected_changes: {name: x}}
    - type: python
      value: file://../../assertions/argument_match.py
      config: {tool: get_spokes, args: {name: crm-dev-neu}}
- description: C01 again
  metadata: {id: C01}
  vars: {user_messages: [hi]}
  assert: []
"""


def test_a_suite_with_several_problems_lists_all_of_them(tmp_path: Path) -> None:
    found = problems(make_suite(tmp_path, SEVERAL))
    assert found == [
        "evals/s1/cases/a.yaml:1: C01: case id C01 is used by 2 tests",
        "evals/s1/cases/a.yaml:11: C01: assertion 3 (input_diff): invalid config: config.expected_changes: "
        "'name' is not a JSON Pointer (it must start with '/')",
        "evals/s1/cases/a.yaml:15: C01: assertion 4 (argument_match): no metric; add `metric: <name>` so its score has "
        "a name in the viewer and the report",
        "evals/s1/cases/a.yaml:15: C01: assertion 4 (argument_match): tool 'get_spokes' is not one of the tools agent "
        "'spoke' is offered (list_spokes, get_spoke, get_spoke_schema, validate_spoke_config, create_spoke_pull_request, "
        "get_pull_request, list_pull_requests, search_docs, get_doc); did you mean get_spoke?",
        "evals/s1/cases/a.yaml:18: C01: case id C01 is used by 2 tests",
    ]


def test_an_unknown_source_spoke_is_named(tmp_path: Path) -> None:
    case = CASE + """\
    - type: python
      value: file://../../assertions/input_diff.py
      metric: input_diff
      config: {source: crm-dev-nue, expected_changes: {/name: x}}
"""
    assert problems(make_suite(tmp_path, case)) == [
        "evals/s1/cases/a.yaml:11: C01: assertion 3 (input_diff): source spoke 'crm-dev-nue' is not in the portal's "
        "seed data; did you mean crm-dev-neu?"
    ]


def test_a_default_assertion_problem_is_said_once(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, CASE + CASE.replace("C01", "C02"))
    suite.config.write_text(suite.config.read_text().replace("[complete_pull_request]", "[complete_pr]"))
    assert problems(suite) == [
        "evals/s1/promptfooconfig.yaml:10: defaultTest assertion 1 (tool_not_executed): tool 'complete_pr' matches no "
        "portal tool (complete_pull_request, create_spoke_pull_request, get_doc, get_pull_request, get_spoke, "
        "get_spoke_schema, list_pull_requests, list_spokes, search_docs, validate_spoke_config); did you mean "
        "complete_pull_request?"
    ]


def test_replay_needs_the_folder_and_every_cassette(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    assert problems(suite, replay="golden") == [
        f"s1: replay folder {suite.folder / 'golden'} does not exist (write its golden plan, then record it: "
        "`npx agent-evals golden s1`)"
    ]
    assert problems(suite, replay=str(tmp_path / "cassettes")) == [
        f"s1: replay folder {tmp_path / 'cassettes' / 's1'} does not exist (record one with `npm run eval -- s1 "
        f"--record {tmp_path / 'cassettes'}`, or use --replay for the golden conversations)"
    ]
    (suite.folder / "golden").mkdir()
    found = problems(suite, replay="golden")
    assert found == ["evals/s1/cases/a.yaml:1: C01: no golden conversation (golden/C01.json): add the case to "
                     "golden/plan.yaml, then record it: `npx agent-evals golden s1 --stale`"]


def test_a_stale_golden_cassette_is_named_with_what_changed(tmp_path: Path) -> None:
    real = discover()[0]  # spoke-create
    copy = tmp_path / "evals" / real.name
    shutil.copytree(real.folder, copy)
    link_project_files(tmp_path)
    instructions = tmp_path / "other.md"
    instructions.write_text((PROJECT_ROOT / "agent_config/agents/spoke/instructions.md").read_text() + "\nBe brief.\n")
    config = copy / "promptfooconfig.yaml"
    config.write_text(config.read_text().replace("      pack: spoke", f"      pack: spoke\n      instructions_file: {instructions}"))
    found = problems(Suite(real.name, copy), "--filter-pattern", "C0[12]", replay="golden")
    assert found == [
        "evals/spoke-create/cases/1-copy.yaml:3: C01: cassette C01.json is stale: instructions changed; re-record it "
        "(`npx agent-evals golden spoke-create --stale` for golden conversations) or replay it with --allow-stale",
        "evals/spoke-create/cases/1-copy.yaml:81: C02: cassette C02.json is stale: instructions changed; re-record it "
        "(`npx agent-evals golden spoke-create --stale` for golden conversations) or replay it with --allow-stale",
    ]
    assert problems(Suite(real.name, copy), "--filter-pattern", "C0[12]", replay="golden", allow_stale=True) == []


def test_filters_that_select_nothing_and_bad_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = make_suite(tmp_path)
    assert problems(suite, "--filter-metadata", "priority=full") == [
        "the filters select no case in suite s1: --filter-metadata priority=full (a metadata filter is a substring "
        "match on the test's own metadata)"
    ]
    assert problems(suite, "--filter-metadata", "priority=smo") == []  # a substring, as Promptfoo matches
    with pytest.raises(FlagError, match=r"--filter-pattern 'C0\[' is not a regular expression"):
        read_flags(["--filter-pattern", "C0["])
    assert check_command("all", replay=None, offline=True, allow_stale=False, promptfoo_args=["-j", "0"]) == 2
    assert capsys.readouterr().out == "check: -j/--max-concurrency must be a whole number of at least 1, got '0'\n"


def test_live_roles_need_a_model_and_the_model_must_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = make_suite(tmp_path)
    result = preflight([suite], read_flags([]))
    assert [str(p) for p in result.problems][0].startswith("the agent role has no model: No LLM endpoint configured")
    offline = preflight([suite], read_flags([]), offline=True)  # offline needs no model: a note for later
    assert offline.ok and offline.notes[0].startswith("the agent role has no model: No LLM endpoint configured")
    assert offline.notes[0].endswith("(a live run needs it; --offline asks no model)")
    with ScriptedOpenAIServer(lambda r: Reply.error(401, "bad key", headers={"x-should-retry": "false"})) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("AGENT_MODEL", "agent-x")
        result = preflight([suite], read_flags([]))
        assert [str(p) for p in result.problems] == [
            f"the agent model does not answer: HTTP 401 from the model server at "
            f"{server.base_url.split('//')[1].split('/')[0]} (model agent-x): bad key — the server wants a key: "
            "set OPENAI_API_KEY"
        ]
        assert server.requests[0].body["max_tokens"] == 1  # one cheap request
        assert len(server.requests) == 1  # the user role uses the same model: asked once


def test_an_external_portal_must_answer_and_accept_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, live_portal
) -> None:
    suite = make_suite(tmp_path)
    monkeypatch.setenv("PORTAL_URL", live_portal.url)
    monkeypatch.setenv("PORTAL_TOKEN", "wrong-token")
    found = [str(p) for p in preflight([suite], read_flags([]), replay=None, offline=True).problems]
    assert any(p.startswith(f"PORTAL_URL: GET {live_portal.url}/api/schema: HTTP 401") and "check PORTAL_TOKEN" in p
               for p in found), found
    monkeypatch.setenv("PORTAL_TOKEN", live_portal.token)
    found = [str(p) for p in preflight([suite], read_flags([]), offline=True).problems]
    assert not any(p.startswith("PORTAL_URL") for p in found)


def test_a_byte_that_is_not_utf8_is_one_line_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = make_suite(tmp_path)
    case = suite.folder / "cases" / "a.yaml"
    case.write_bytes(case.read_bytes().replace(b"Get a copy of", b"Get a copy \xe9of"))
    assert problems(suite) == [
        "evals/s1/cases/a.yaml:5: not UTF-8: byte(s) e9 at column 24; save the file as UTF-8"
    ]
    monkeypatch.setattr("agent_evals.preflight.command.select", lambda name: [suite])
    assert check_command("s1", replay=None, offline=True, allow_stale=False, promptfoo_args=[]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "  evals/s1/cases/a.yaml:5: not UTF-8: byte(s) e9 at column 24; save the file as UTF-8"


def test_a_yaml_error_in_one_case_file_hides_no_other_problem(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, CASE.replace("metric: tool_sequence", "metric: [unclosed"))
    (suite.folder / "cases" / "b.yaml").write_text(CASE.replace("C01", "C02").replace("mode: in_order", "mod: in_order"))
    (suite.folder / "cases" / "c.yaml").write_text("- just a string\n")
    assert problems(suite) == [
        "evals/s1/cases/a.yaml:10: YAML syntax error: while parsing a flow sequence expected ',' or ']', but got ':'",
        "evals/s1/cases/c.yaml: a test must be a mapping (description, vars, assert, …), got 'just a string'",
        "evals/s1/cases/b.yaml:7: C02: assertion 2 (tool_sequence): invalid config: unknown config key 'mod'; allowed "
        "keys: expected, mode, ignore",
    ]


def test_a_case_file_the_tests_do_not_name_is_named(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    suite.config.write_text(suite.config.read_text().replace("tests: file://cases/*.yaml",
                                                             "tests:\n  - file://cases/a.yaml"))
    (suite.folder / "cases" / "b.yaml").write_text(CASE.replace("C01", "C02"))
    (suite.folder / "cases" / "more").mkdir()
    (suite.folder / "cases" / "more" / "c.yml").write_text(CASE.replace("C01", "C03"))
    (suite.folder / "cases" / "notes.txt").write_text("not a case file")
    assert problems(suite) == [
        "evals/s1/cases/b.yaml: tests: in promptfooconfig.yaml does not name this case file, so its cases never run; "
        "add `- file://cases/b.yaml` to tests: (or move the file out of cases/)",
        "evals/s1/cases/more/c.yml: tests: in promptfooconfig.yaml does not name this case file, so its cases never "
        "run; add `- file://cases/more/c.yml` to tests: (or move the file out of cases/)",
    ]


def test_offline_needs_no_endpoint_as_the_readme_runs_it() -> None:
    """``npm run check -- all --offline`` ("config only") on a machine with no model configured."""
    env = {k: v for k, v in clean_env().items() if k not in ("AGENT_EVALS_DATA_DIR",)}
    done = subprocess.run(["npm", "run", "--silent", "check", "--", "all", "--offline"], cwd=PROJECT_ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "check: ok (102 case(s) in 6 suite(s))"
    # the release agent's stdio servers started on a repository its system made up (no note says they were not)
    assert not [line for line in lines if "not started by the check" in line], lines
    rest = lines[:-1]
    assert rest and all(line.startswith("note: the ") and line.endswith("--offline asks no model)") for line in rest), lines


def test_one_output_file_for_several_suites_is_refused_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Each suite is an eval of its own: a shared ``-o`` file would keep the last suite's rows only."""
    suites = discover()
    found = preflight(suites, read_flags(["-o", "results.json", "--filter-pattern", "^(C01|Q01|I01) "]),
                      replay="golden")
    assert [str(p) for p in found.problems] == [
        "-o results.json would be written by each of 3 suites (spoke-create, spoke-qa, integration-qa) and keep only "
        "the last one's rows: put {suite} in the path, e.g. -o {suite}.json"
    ]
    assert preflight(suites, read_flags(["-o", "out/{suite}.json"]), replay="golden").ok
    assert preflight(suites, read_flags(["-o", "results.json", "--filter-pattern", "^Q01 "]), replay="golden").ok

    from agent_evals.runner.run import run

    monkeypatch.setenv("AGENT_EVALS_DATA_DIR", str(tmp_path / "data" / "portal"))
    assert run("all", "golden", None, ["-o", "out/all.html"], check=False) == 2  # without the check: the same line
    assert "-o out/all.html would be written by each of 6 suites" in caplog.text
    assert "e.g. -o out/{suite}.html" in caplog.text
    assert not (tmp_path / "data").exists()


def _use_agent(suite: Suite, agent: str) -> Suite:
    config = suite.folder / "promptfooconfig.yaml"
    config.write_text(config.read_text().replace("config: {agent: spoke,", f"config: {{agent: {agent},"))
    return suite


NOTES_AGENT = """\
description: spoke requests with a notebook
model: m
instructions: i.md
servers:
  portal:
    url: ${PORTAL_URL}/mcp/
    tools: [list_spokes, get_spoke, validate_spoke_config, create_spoke_pull_request]
  notes:
    command: %(command)s
    args: ["%(server)s"]
    env: {NOTES_EXIT_AT_START: "%(exit)s"}
    tools: [%(tools)s]
"""


@pytest.mark.parametrize(
    ("agent", "settings", "expected"),
    [
        ("notes-ok", {}, None),
        ("notes-missing", {"command": "/no/such/notes-server"},
         "agent 'notes-missing': MCP server 'notes' (notes-server) could not be started: command "
         "'/no/such/notes-server' not found (not a file, nor on PATH)"),
        ("notes-exits", {"exit": "no notebook at /nowhere"},
         "agent 'notes-exits': MCP server 'notes' ({python}) exited at start; the last line of its stderr: notes: "
         "fatal: no notebook at /nowhere"),
        ("notes-filter", {"tools": "add_note, teleport"},
         "agent 'notes-filter': the tool filter of MCP server 'notes' names teleport, which the server does not offer "
         "(its tools: add_note, count_notes, echo_env, stop_server)"),
        ("notes-twice", {"tools": "add_note, get_spoke"},
         "tool 'get_spoke' is in the `tools` of both servers 'portal' and 'notes': the model would not know which one "
         "it calls; keep it in one of them"),
    ],
)
def test_the_agents_stdio_servers_are_started_and_their_filters_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str, settings: dict[str, str], expected: str | None
) -> None:
    from tests.agent import notes_agent

    agents = tmp_path / "agents"
    (agents / agent).mkdir(parents=True)
    values = {"command": sys.executable, "server": notes_agent.SERVER, "exit": "", "tools": "add_note", **settings}
    (agents / agent / "agent.yaml").write_text(NOTES_AGENT % values)
    (agents / agent / "i.md").write_text("Help.")
    monkeypatch.setattr("agent_evals.agent.config.agent_config_dir", lambda: agents)
    found = problems(_use_agent(make_suite(tmp_path), agent))
    if expected is None:
        assert found == []
    else:
        (line,) = found
        assert line.startswith("evals/s1/promptfooconfig.yaml:") and line.endswith(
            expected.format(python=Path(sys.executable).name))


def test_a_server_whose_variable_is_set_only_at_run_time_is_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agents = tmp_path / "agents"
    (agents / "notes-later").mkdir(parents=True)
    values = {"command": "${NOTES_PYTHON_LATER}", "server": "x.py", "exit": "", "tools": "add_note"}
    (agents / "notes-later" / "agent.yaml").write_text(NOTES_AGENT % values)
    (agents / "notes-later" / "i.md").write_text("Help.")
    monkeypatch.setattr("agent_evals.agent.config.agent_config_dir", lambda: agents)
    result = preflight([_use_agent(make_suite(tmp_path), "notes-later")], read_flags([]), offline=True)
    assert [str(p) for p in result.problems if "role has no model" not in str(p)] == []
    assert any(note.startswith("agent 'notes-later', server 'notes': command names ${NOTES_PYTHON_LATER}, which is "
                               "not set") and note.endswith("not started by the check (the agent checks it when it opens)")
               for note in result.notes)


def _release_suite() -> Suite:
    (suite,) = [s for s in discover(PROJECT_ROOT / "evals") if s.name == "release-notes"]
    return suite


def test_the_release_agents_servers_start_in_the_preflight_on_a_repository_its_system_makes_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile  # lazy: only this test looks at the temporary directory

    private = tmp_path / "tmp"  # this test's own temporary directory: other workers' runs make theirs elsewhere
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    result = preflight([_release_suite()], read_flags([]), offline=True)
    assert [str(p) for p in result.problems if "role has no model" not in str(p)] == []
    assert not [note for note in result.notes if "REPO" in note]  # started, not left as a note for later
    assert list(private.iterdir()) == []  # the made-up repository is gone


def test_a_release_server_that_cannot_start_is_a_problem_before_the_run(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    agents = tmp_path / "agents"
    shutil.copytree(PROJECT_ROOT / "agent_config" / "agents" / "release-notes", agents / "release-notes")
    config = agents / "release-notes" / "agent.yaml"
    config.write_text(config.read_text().replace("/.venv/bin/mcp-server-git", "/.venv/bin/no-such-git-server"))
    monkeypatch.setattr("agent_evals.agent.config.agent_config_dir", lambda: agents)
    found = problems(_release_suite())
    (line,) = found
    assert line.endswith("agent 'release-notes': MCP server 'git' (no-such-git-server) could not be started: command "
                         f"'{PROJECT_ROOT}/.venv/bin/no-such-git-server' not found (not a file, nor on PATH)"), line


def test_on_files_ok_is_called_once_the_files_are_sound_and_before_the_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner starts its warm server from ``on_files_ok``: not for a check that fails on a file,
    once for one whose files are sound, and before the models are asked (its start overlaps them)."""
    suite = make_suite(tmp_path)
    calls: list[int] = []
    problems(suite, "--filter-metadata", "priority=full", on_files_ok=lambda: calls.append(0))
    assert calls == []
    with ScriptedOpenAIServer(lambda r: Reply.error(401, "bad key", headers={"x-should-retry": "false"})) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("AGENT_MODEL", "agent-x")
        result = preflight([suite], read_flags([]), on_files_ok=lambda: calls.append(len(server.requests)))
    assert not result.ok  # the model refused: the check fails after it was called
    assert calls == [0]  # once, and no model asked yet
