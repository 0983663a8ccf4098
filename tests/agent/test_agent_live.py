"""The production agent end to end: the real openai client against the scripted server,
the real MCP client against the live portal (both on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import dataclasses
import http.server
import json
import logging
import socket
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from agent_evals.agent.errors import AgentConfigError, ServerUnavailable
from agent_evals.processes import KitStarter
from agent_evals.agent.factory import create_agent, load_factory
from agent_evals.agent.types import AgentReply, ConversationalAgent
from agent_evals.llm.types import LLMConfigError, LLMError
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.testing.scripted_openai import Reply, ScriptedOpenAIServer
from tests.mcp_portal import portal_server

from .conftest import INTEGRATION_TOOLS, SPOKE_TOOLS, Respond, Script


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_turn_with_a_tool_call(
    script: Script, respond: Respond, scripted_llm: ScriptedOpenAIServer
) -> None:
    script(
        [
            Reply.tool_calls([("get_spoke", {"name": "crm-dev-neu"})], usage=(100, 10)),
            Reply.text("It is crm-dev-neu.", usage=(200, 20)),
        ]
    )
    reply = respond("spoke", "Show me crm-dev-neu")
    assert (reply.text, reply.stop_reason) == ("It is crm-dev-neu.", "reply")
    (call,) = reply.tool_calls
    assert (call.name, call.arguments, call.raw_arguments, call.is_error) == (
        "get_spoke",
        {"name": "crm-dev-neu"},
        '{"name": "crm-dev-neu"}',
        False,
    )
    assert call.result["config"]["name"] == "crm-dev-neu" and call.duration_ms > 0 and call.server == "portal"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.calls) == (300, 30, 2)
    # the tool's result went back to the model, answering the call's id
    second = scripted_llm.requests[1].messages
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == call.id
    assert json.loads(second[-1]["content"])["config"]["name"] == "crm-dev-neu"


def test_the_model_is_offered_the_configured_tools_with_the_portals_schemas(
    script: Script, respond: Respond, scripted_llm: ScriptedOpenAIServer
) -> None:
    script(["hi"])
    respond("spoke", "hello")
    (request,) = scripted_llm.requests
    assert request.tool_names == SPOKE_TOOLS
    get_spoke = next(t["function"] for t in request.tools or [] if t["function"]["name"] == "get_spoke")
    assert get_spoke["parameters"]["required"] == ["name"]
    assert "file name without .json" in get_spoke["parameters"]["properties"]["name"]["description"]
    assert get_spoke["description"].startswith("Get the full configuration of one spoke")


def test_the_integration_agent_is_offered_only_read_only_tools(
    script: Script, respond: Respond, scripted_llm: ScriptedOpenAIServer
) -> None:
    script(["It has three subnets."])
    respond("integration", "What subnets does crm-dev-neu have?")
    (request,) = scripted_llm.requests
    assert request.tool_names == INTEGRATION_TOOLS
    assert not {"create_spoke_pull_request", "validate_spoke_config", "complete_pull_request"} & set(
        request.tool_names
    )
    assert request.messages[0]["content"].startswith("# Integration agent")
    assert request.temperature == 0.0  # from its agent.yaml


def test_defaults_from_agent_yaml_and_the_environment(
    script: Script, respond: Respond, scripted_llm: ScriptedOpenAIServer
) -> None:
    script(["hi"])
    respond("spoke", "hello")
    (request,) = scripted_llm.requests
    assert request.model == "agent-model"  # AGENT_MODEL wins over agent.yaml's gpt-4.1
    assert request.temperature == 0.2
    assert request.messages[0]["content"].startswith("# Spoke agent")


def test_overrides_reach_the_request(
    script: Script, respond: Respond, scripted_llm: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    instructions = tmp_path / "terse.md"
    instructions.write_text("Answer in one word.\n")
    script(["Yes."])
    respond("spoke", "hello", instructions_file=instructions, model="other-model", temperature=0.7)
    (request,) = scripted_llm.requests
    assert request.messages[0] == {"role": "system", "content": "Answer in one word."}
    assert (request.model, request.temperature) == ("other-model", 0.7)


def test_bad_calls_reach_the_model_as_errors(
    script: Script, respond: Respond, scripted_llm: ScriptedOpenAIServer
) -> None:
    script(
        [
            Reply.tool_calls(
                [
                    ("get_spoke", "{not json"),  # unparsable arguments
                    ("complete_pull_request", {"id": 1}),  # exists on the portal, not allowed to this agent
                    ("delete_everything", {}),  # exists nowhere
                    ("get_spoke", {"name": "no-such-spoke"}),  # the portal answers an error
                    ("get_spoke", {"nam": "crm-dev-neu"}),  # arguments the tool rejects
                ]
            ),
            "Sorry, that did not work.",
        ]
    )
    reply = respond("spoke", "break things")
    assert [c.is_error for c in reply.tool_calls] == [True] * 5
    assert "not a JSON object" in reply.tool_calls[0].result and reply.tool_calls[0].arguments is None
    assert "'complete_pull_request' is not one of your tools" in reply.tool_calls[1].result
    assert "'delete_everything' is not one of your tools" in reply.tool_calls[2].result
    assert "unknown spoke 'no-such-spoke'" in reply.tool_calls[3].result
    assert "name" in reply.tool_calls[4].result and "Field required" in reply.tool_calls[4].result
    fed_back = [m["content"] for m in scripted_llm.requests[1].messages if m["role"] == "tool"]
    assert len(fed_back) == 5 and all(text.startswith("Error") for text in fed_back)
    assert reply.text == "Sorry, that did not work."


def test_max_tool_rounds(script: Script, respond: Respond, scripted_llm: ScriptedOpenAIServer) -> None:
    script([Reply.tool_calls([("list_spokes", {})])] * 3)
    reply = respond("spoke", "loop forever", max_tool_rounds=2)
    assert reply.stop_reason == "max_tool_rounds" and "limit of 2 rounds" in reply.text
    assert len(scripted_llm.requests) == 3
    assert [c.is_error for c in reply.tool_calls] == [False, False, True]


def test_one_mcp_session_serves_every_turn(script: Script, kit_env: dict[str, str]) -> None:
    script(
        [
            Reply.tool_calls([("list_spokes", {})]),
            "first",
            Reply.tool_calls([("get_spoke", {"name": "crm-dev-neu"})]),
            "second",
        ]
    )

    async def conversation() -> tuple[AgentReply, AgentReply, bool]:
        history: list[dict[str, Any]] = [{"role": "user", "content": "one"}]
        async with create_agent("spoke") as agent:
            session = agent._tools
            first = await agent.respond(history)
            history += [*first.messages, {"role": "user", "content": "two"}]
            second = await agent.respond(history)
            return first, second, agent._tools is session

    first, second, same = asyncio.run(conversation())
    assert (first.text, second.text, same) == ("first", "second", True)
    assert not second.tool_calls[0].is_error


def test_transient_model_failures_are_retried(
    script: Script, respond: Respond, scripted_llm: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_MAX_RETRIES", "2")
    quick = {"retry-after-ms": "1"}
    script([Reply.error(429, headers=quick), Reply.error(500, headers=quick), "made it"])
    assert respond("spoke", "hello").text == "made it"
    assert len(scripted_llm.requests) == 3


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply.malformed("{not json"), "not valid JSON"),
        (Reply.json({"choices": []}), "no choices"),
        (Reply.error(500, "the model is down"), "the model is down"),
    ],
    ids=["malformed-body", "no-choices", "server-error"],
)
def test_a_model_that_fails_raises_llm_error(
    script: Script, respond: Respond, reply: Reply, message: str
) -> None:
    script([reply])
    with pytest.raises(LLMError, match=message):
        respond("spoke", "hello")


def test_no_llm_settings_is_one_clear_error(kit_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(LLMConfigError) as caught:
        create_agent("spoke")
    for variable in ("AZURE_OPENAI_ENDPOINT", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        assert variable in str(caught.value)


def test_no_portal_url_is_a_config_error_before_any_model_call(
    kit_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PORTAL_URL")
    with pytest.raises(AgentConfigError, match=r"agent 'spoke', server 'portal': url names \$\{PORTAL_URL\}, which is not "
                                               r"set") as caught:
        create_agent("spoke", chat_model=_NoModel())
    assert caught.value.kind == "config"


def _open(url: str, token: str | None) -> None:
    async def go() -> None:
        async with create_agent("spoke", variables={"PORTAL_URL": url, "PORTAL_TOKEN": token or ""}):
            pass

    asyncio.run(go())


def test_a_portal_that_is_down(kit_env: dict[str, str]) -> None:
    """An MCP endpoint that cannot be reached is the kind ``system`` (the REST calls' failures are too)."""
    url = f"http://127.0.0.1:{_free_port()}"
    with pytest.raises(ServerUnavailable, match=f"MCP server 'portal' at {url}/mcp/ is not reachable: ConnectError") as caught:
        _open(url, "x" * 20)
    assert caught.value.kind == "system"


@pytest.mark.parametrize("token", ["wrong-token-123456", None])
def test_a_wrong_token(kit_env: dict[str, str], live_portal: PortalProcess, token: str | None) -> None:
    with pytest.raises(
        ServerUnavailable, match=r"MCP server 'portal' at .* refused the MCP session: HTTP 401 \(check PORTAL_TOKEN\)"
    ) as caught:
        _open(live_portal.url, token)
    assert token is None or token not in str(caught.value)


def test_a_portal_that_dies_mid_conversation(
    kit_env: dict[str, str], script: Script, tmp_path: Path, portal_starter: KitStarter
) -> None:
    script(
        [Reply.tool_calls([("list_spokes", {})]), "first", Reply.tool_calls([("list_spokes", {})]), "never"]
    )
    with PortalProcess(
            starter=portal_starter, data_dir=tmp_path / "data", log_file=tmp_path / "portal.log") as portal:

        async def conversation() -> str:
            async with create_agent("spoke", variables={"PORTAL_URL": portal.url, "PORTAL_TOKEN": ""}) as agent:
                first = await agent.respond([{"role": "user", "content": "one"}])
                portal.stop()
                await agent.respond(
                    [{"role": "user", "content": "one"}, *first.messages, {"role": "user", "content": "two"}]
                )
            return "unreachable"

        with pytest.raises(
            ServerUnavailable, match="MCP server 'portal' at .* is not reachable"
        ):  # not CancelledError, not an ExceptionGroup
            asyncio.run(conversation())


def test_allowed_tools_the_portal_lacks(kit_env: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "agent.yaml").write_text(
        "description: d\nmodel: m\ninstructions: i.md\n"
        "servers: {portal: {url: '${PORTAL_URL}/mcp/', headers: {Authorization: 'Bearer ${PORTAL_TOKEN}'}, "
        "tools: [list_spokes, teleport]}}\n"
    )
    (folder / "i.md").write_text("Be odd.")

    async def go() -> None:
        async with create_agent("odd", config_dir=tmp_path):
            pass

    with pytest.raises(
        AgentConfigError, match="the tool filter of MCP server 'portal' names teleport, which the server does not offer "
                                r"\(its tools: complete_pull_request, create_spoke_pull_request, "
    ):
        asyncio.run(go())


def test_headers_trace_the_pull_requests_the_agent_creates(
    script: Script, respond: Respond, live_portal: PortalProcess
) -> None:
    api = PortalAPI(live_portal.url, token=live_portal.token)
    config = dict(api.get_spoke("crm-dev-neu")["config"], name="agenttest-dev-weu")
    args = {
        "spoke_name": "agenttest-dev-weu",
        "config": config,
        "title": "Add spoke agenttest-dev-weu",
        "description": "test",
    }
    script([Reply.tool_calls([("create_spoke_pull_request", args)]), "Opened."])
    headers = {"X-Eval-Id": "eval-agent-tests", "X-Test-Id": "T1#abc", "X-Created-By": "agent-evals:spoke"}
    reply = respond("spoke", "open it", headers=headers)
    pr = reply.tool_calls[0].result
    try:
        stored = api.get_pull_request(pr["id"])
        assert (stored["eval_id"], stored["test_id"], stored["created_by"]) == (
            "eval-agent-tests",
            "T1#abc",
            "agent-evals:spoke",
        )
    finally:
        api.abandon_pull_request(pr["id"])


def test_secrets_stay_out_of_replies_and_logs(
    script: Script, respond: Respond, live_portal: PortalProcess, caplog: pytest.LogCaptureFixture
) -> None:
    token = live_portal.token
    assert token
    script(
        [
            Reply.tool_calls(
                [
                    ("get_spoke", {"name": "crm-dev-neu"}),
                    ("get_spoke", "{oops"),
                    ("complete_pull_request", {"id": 1}),
                ]
            ),
            "done",
        ]
    )
    with caplog.at_level(logging.DEBUG):
        reply = respond("spoke", "hello")
        with pytest.raises(ServerUnavailable) as caught:
            _open(f"http://127.0.0.1:{_free_port()}", token)
        with pytest.raises(ServerUnavailable) as refused:
            _open(live_portal.url, token + "-wrong")
    assert token not in caplog.text
    assert token not in json.dumps(dataclasses.asdict(reply), default=str)
    assert token not in str(caught.value) + str(refused.value) + repr(refused.value)
    assert token not in repr(portal_server(live_portal.url, token))


def test_the_agent_follows_the_interface_and_factories_load() -> None:
    assert isinstance(
        create_agent("spoke", chat_model=_NoModel(), variables={"PORTAL_URL": "http://127.0.0.1:1"}),
        ConversationalAgent,
    )
    assert load_factory("agent_evals.agent.factory:create_agent") is create_agent
    assert load_factory("agent_evals.agent.factory.create_agent") is create_agent
    for dotted, message in [
        ("nowhere_at_all:make", "cannot import 'nowhere_at_all'"),
        ("agent_evals.agent.factory:missing", "has no callable 'missing'"),
        ("create_agent", "is not a dotted path"),
    ]:
        with pytest.raises(AgentConfigError, match=message):
            load_factory(dotted)


class _NoModel:
    model = "none"

    async def complete(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("not called")


class _FailingToolCalls(http.server.BaseHTTPRequestHandler):
    """Forwards MCP requests to the live portal but answers every tools/call with HTTP 500."""

    target = ""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if json.loads(body).get("method") == "tools/call":
            self._answer(500, b'{"error": "internal error"}', "application/json")
            return
        keep = {
            k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")
        }
        request = urllib.request.Request(self.target + self.path, data=body, headers=keep, method="POST")
        with urllib.request.urlopen(request, timeout=10) as answer:
            self._answer(answer.status, answer.read(), answer.headers.get("content-type", "application/json"))

    def _answer(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_portal_error_answer_reaches_the_model_as_a_tool_error(
    kit_env: dict[str, str], script: Script, live_portal: PortalProcess, scripted_llm: ScriptedOpenAIServer
) -> None:
    handler = type("Handler", (_FailingToolCalls,), {"target": live_portal.url})
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as proxy:
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        try:
            script([Reply.tool_calls([("list_spokes", {})]), "The portal failed."])
            url = f"http://127.0.0.1:{proxy.server_address[1]}"
            reply = respond_with(url, live_portal.token)
        finally:
            proxy.shutdown()
    (call,) = reply.tool_calls
    assert (
        call.is_error
        and "the MCP server portal answered an error" in str(call.result)
        and "(HTTP 500)" in str(call.result)
        and call.server == "portal"
    )
    (fed_back,) = [m["content"] for m in scripted_llm.requests[1].messages if m["role"] == "tool"]
    assert fed_back.startswith("Error: the MCP server portal answered an error")
    assert reply.text == "The portal failed."


def respond_with(url: str, token: str | None) -> AgentReply:
    async def turn() -> AgentReply:
        async with create_agent("spoke", variables={"PORTAL_URL": url, "PORTAL_TOKEN": token or ""}) as agent:
            return await agent.respond([{"role": "user", "content": "list them"}])

    return asyncio.run(turn())
