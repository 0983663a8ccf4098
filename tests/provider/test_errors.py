"""When a run cannot happen or breaks off: a Promptfoo ``error`` saying what is wrong, PRs still listed."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.testing.conversations import ConversationScript
from agent_evals.packs.spoke.scripts import SpokeCopy
from agent_evals.testing.scripted_openai import Reply, ScriptedOpenAIServer
from tests.agent import notes_agent
from tests.conftest import PROJECT_ROOT
from tests.spoke_prs import abandoned, prs

from .conftest import Call, check_contract

COPY = SpokeCopy("[E01]", new_name="crm9-dev-neu", address_space="10.86.0.0/22")
FIXED = {"user_messages": COPY.fixed_messages()}
RULES = "agent_evals.conversation.rule_users:ConfirmingUser"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    ("config", "vars_", "prompt", "message"),
    [
        pytest.param({"agent": "nope"}, FIXED, "", "unknown agent 'nope'", id="unknown agent"),
        pytest.param({}, {}, "", "no user definition: set vars.simulated_user", id="no user"),
        pytest.param(
            {}, {"simulated_user": {"class": "nopkg.users:Someone"}}, "",
            "simulator class 'nopkg.users:Someone': cannot import 'nopkg.users'", id="class module missing",
        ),
        pytest.param(
            {}, {"simulated_user": {"class": "agent_evals.conversation.rule_users:Nobody"}}, "",
            "'agent_evals.conversation.rule_users' has no callable 'Nobody'", id="class missing",
        ),
        pytest.param(
            {}, {"simulated_user": {"class": "agent_evals.conversation.users:Turn"}}, "",
            "simulator class 'agent_evals.conversation.users:Turn' is not a subclass of BaseUserSimulator",
            id="not a simulator",
        ),
        pytest.param(
            {}, {"simulated_user": {"class": RULES, "params": {"confirm": "ok"}}}, "",
            "ConfirmingUser: param 'request' must be a non-empty string, got None", id="simulator params",
        ),
        pytest.param({}, {**FIXED, "max_turns": 0}, "", "max_turns: Input should be greater than or equal to 1",
                     id="max_turns 0"),
        pytest.param({}, {**FIXED, "max_turns": 101}, "", "max_turns: Input should be less than or equal to 100",
                     id="max_turns 101"),
        pytest.param({"max_turns": "many"}, FIXED, "", "max_turns: Input should be a valid integer", id="max_turns text"),
        pytest.param({"factory": "nopkg:make"}, FIXED, "", "factory 'nopkg:make': cannot import 'nopkg'", id="factory"),
        pytest.param({"instructions_file": "missing.md"}, FIXED, "", "missing.md does not exist", id="instructions"),
        pytest.param({"mode": "single_turn"}, {}, "  ", "mode single_turn: the prompt is empty", id="empty prompt"),
        pytest.param({"mode": "chat"}, FIXED, "", "mode: Input should be 'conversation' or 'single_turn'", id="mode"),
    ],
)
def test_bad_input_is_an_error_result_and_the_next_call_still_works(
    converse: Call, config: dict[str, Any], vars_: dict[str, Any], prompt: str, message: str
) -> None:
    result = converse([COPY.script()], "E01", vars_, config=config, prompt=prompt)

    assert message in result["error"]
    assert set(result) == {"output", "metadata", "tokenUsage", "cost", "error"}
    check_contract(result["metadata"])
    metadata = result["metadata"]
    assert result["error"].startswith("[config] ") and metadata["error_kind"] == "config"
    assert metadata["conversation_end"] == "error" and result["error"] == f"[config] {metadata['error']}"
    assert metadata["tool_calls"] == [] and prs(metadata) == []
    assert result["output"].endswith(f"[conversation ended: error (config): {metadata['error']}]")

    after = converse([COPY.script()], "E01", FIXED, config={"mode": "single_turn"}, prompt=COPY.request)
    assert "error" not in after, after.get("error")  # a worker keeps serving later tests


def test_an_mcp_endpoint_that_is_down_is_a_system_error(converse: Call, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("PORTAL_URL", url)
    result = converse([COPY.script()], "E02", FIXED)

    assert result["error"].startswith(f"[system] MCP server 'portal' at {url}/mcp/ is not reachable")
    assert result["metadata"]["error_kind"] == "system"
    check_contract(result["metadata"])
    assert result["metadata"]["turns"] == 0


def test_model_unreachable_is_an_error(converse: Call, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    result = converse([COPY.script()], "E03", FIXED)

    assert result["error"].startswith("[model] model agent-model at 127.0.0.1")
    assert "unreachable" in result["error"]
    assert result["metadata"]["transcript"] == [
        {"role": "user", "content": COPY.request, "turn": 1, "tool_calls": []}
    ]
    assert result["output"].startswith(f"User: {COPY.request}\nAssistant: (no reply)")


def test_model_failing_after_a_pr_was_created_still_lists_the_pr(converse: Call, portal_api: PortalAPI) -> None:
    broken = [*COPY.agent_steps()[:4], Reply.error(503, "model overloaded", headers={"x-should-retry": "false"})]
    result = converse([ConversationScript(COPY.key, broken)], "E04", FIXED)

    assert result["error"].startswith("[model] ") and "HTTP 503" in result["error"]
    assert "model overloaded" in result["error"]
    metadata = result["metadata"]
    check_contract(metadata)
    assert metadata["conversation_end"] == "error" and metadata["turns"] == 2
    [pr] = prs(metadata)  # created in the turn that broke off
    calls = [(c["name"], c["turn"]) for c in metadata["tool_calls"]]
    assert calls[-1] == ("create_spoke_pull_request", 2)  # the broken turn's calls are kept too
    assert "[tool] create_spoke_pull_request(" in result["output"]  # and shown under the unanswered message
    live = portal_api.get_pull_request(pr["id"])
    assert live["test_id"] == metadata["trace"]["test_id"]
    assert live["status"] == "abandoned" and abandoned(metadata["cleanup"]) == [pr["id"]]  # by the provider
    assert live["spoke_name"] == "crm9-dev-neu"


def test_a_stdio_server_dying_mid_conversation_is_a_system_error_and_the_pr_is_still_undone(
    converse: Call, portal_api: PortalAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent's second server (stdio) exits on a tool call after the PR was opened: the row is an
    error of kind system naming the server (the run could not happen), and the provider undoes the PR."""
    monkeypatch.setenv("NOTES_PYTHON", sys.executable)
    monkeypatch.setenv("NOTES_SERVER", str(notes_agent.SERVER))
    dying = [*COPY.agent_steps()[:4], Reply.tool_calls([("stop_server", {})]), "never"]
    config = {"factory": "tests.agent.notes_agent:create_agent", "agent": "notes"}
    result = converse([ConversationScript(COPY.key, dying)], "E08", FIXED, config=config)

    metadata = result["metadata"]
    check_contract(metadata)
    assert result["error"].startswith(
        f"[system] MCP server 'notes' ({Path(sys.executable).name}) stopped during the conversation (calling "
        "stop_server); the last line of its stderr: notes: stopping on request"
    )
    assert (metadata["error_kind"], metadata["conversation_end"]) == ("system", "error")
    assert {c["name"]: c.get("server") for c in metadata["tool_calls"]}["create_spoke_pull_request"] == "portal"
    [pr] = prs(metadata)
    assert portal_api.get_pull_request(pr["id"])["status"] == "abandoned"
    assert abandoned(metadata["cleanup"]) == [pr["id"]]  # undone by the provider
    assert metadata["cleanup"]["summary"] == "abandoned 1 PR(s)"  # in the spoke pack's words


def test_user_model_failing_after_a_pr_keeps_the_recorded_turns(converse: Call) -> None:
    user = [COPY.request, "Yes please", Reply.error(500, "user model down", headers={"x-should-retry": "false"})]
    result = converse([COPY.script(user=user)], "E05", {"simulated_user": {"goal": "[E01] copy"}})

    metadata = result["metadata"]
    assert result["error"].startswith("[user_simulator] the simulated user's model failed: ")
    assert "user model down" in result["error"] and metadata["error_kind"] == "user_simulator"
    assert metadata["turns"] == 2 and len(prs(metadata)) == 1
    assert [c["name"] for c in metadata["tool_calls"]][-1] == "create_spoke_pull_request"
    assert metadata["usage"]["user"]["calls"] == 2


def test_an_assertion_promptfoo_would_fail_on_is_a_config_error_before_the_conversation(
    converse: Call, scripted_llm: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    """A misspelled check file or assertion type: one ``[config]`` error row, no model asked, nothing made
    (Promptfoo itself would fail the row with a traceback after the whole conversation)."""
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "mine.py").write_text("def get_assert(output, context):\n    return True\n")
    asserts = [
        {"type": "python", "value": "file://checks/mine.py", "metric": "mine"},  # exists: fine
        {"type": "python", "value": "file://../../assertions/no_such_check.py", "metric": "typo"},
        {"type": "pythonn", "value": "file://checks/mine.py", "metric": "mine2"},
    ]
    before = len(scripted_llm.requests)

    result = converse([COPY.script()], "E06", FIXED, asserts=asserts)

    assert result["error"].startswith("[config] ")
    assert "assertion 2 (python, metric typo): file://../../assertions/no_such_check.py names no file" in result["error"]
    assert "assertion 3 (pythonn, metric mine2): unknown assertion type 'pythonn'; did you mean python?" in result["error"]
    assert "assertion 1" not in result["error"]
    assert result["metadata"]["tool_calls"] == [] and result["metadata"]["turns"] == 0
    assert len(scripted_llm.requests) == before  # not a token spent


def test_a_pull_request_taken_away_mid_run_is_an_error_not_a_failure(
    converse: Call, portal_api: PortalAPI
) -> None:
    """Someone else abandons the conversation's PR before it is graded (a cleanup while the run went on):
    the row cannot be graded, so it is an error of kind system, never the agent's failure."""
    steps = COPY.agent_steps()
    final = steps[-1]
    eval_id = "eval-taken-away"

    def cleaned_up_meanwhile(request: Any) -> Reply:
        for pr in portal_api.list_pull_requests(status="active", eval_id=eval_id):
            portal_api.abandon_pull_request(pr["id"])  # as `npm run cleanup` did
        return final(request)  # type: ignore[operator]

    asserts = [{"type": "python", "value": f"file://{PROJECT_ROOT}/assertions/pull_request.py", "metric": "pr"}]
    result = converse([ConversationScript(COPY.key, [*steps[:-1], cleaned_up_meanwhile])], "E07", FIXED,
                      eval_id=eval_id, asserts=asserts, config={"pack": "spoke"})
    metadata = result["metadata"]
    [pr] = prs(metadata)
    assert result["error"] == (
        f"[system] pull request(s) #{pr['id']}, created in this conversation, were abandoned before it was graded, not "
        "by the agent: something else cleaned them up while the run was going (`npm run cleanup`, or another run's "
        "sweep); the row cannot be graded"
    )
    assert metadata["error_kind"] == "system"
    assert "checks" not in metadata  # an error row is not graded: pull_request never said "PR is abandoned"
