"""``POST /api/agents/{name}/chat``: a real portal process (``agent-evals portal serve``, which
mounts the chat router by default, so these tests also check that wiring) whose agent talks to the scripted model server and back to the
portal's own MCP endpoint. Error paths that need no model run in-process."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from agent_evals.live.chat_api import build_chat_router, loopback_url, new_conversation_id
from agent_evals.processes import KitStarter
from agent_evals.live.routers import live_routers
from agent_evals.packs import GenericPack, PackError
from agent_evals.packs.spoke.portal.app import PortalConfig, create_app
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.testing.scripted_openai import ChatRequest, Reply, ScriptedOpenAIServer

from tests.agent.conftest import INTEGRATION_TOOLS, Script, script  # noqa: F401  (script: the agent tests' fixture)

CHAT = "/api/agents/{}/chat"
# Variables a developer's shell may carry that would point the portal's agent elsewhere ("" = unset).
_FOREIGN = (
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_AD_TOKEN",
    "OPENAI_API_KEY",
    "JUDGE_MODEL",
)


@pytest.fixture(scope="module")
def chat_portal(
    tmp_path_factory: pytest.TempPathFactory, scripted_llm: ScriptedOpenAIServer, portal_starter: KitStarter
) -> Iterator[PortalProcess]:
    root = tmp_path_factory.mktemp("chat-portal")
    env = {name: "" for name in _FOREIGN}
    env.update(OPENAI_BASE_URL=scripted_llm.base_url, AGENT_MODEL="agent-model", LLM_MAX_RETRIES="0")
    with PortalProcess(
        data_dir=root / "data", token=PortalProcess.new_token(), log_file=root / "portal.log", extra_env=env,
        starter=portal_starter,
    ) as portal:
        yield portal


@pytest.fixture(scope="module")
def client(chat_portal: PortalProcess) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {chat_portal.token}"}
    with httpx.Client(base_url=chat_portal.url, headers=headers, timeout=30) as http:
        yield http


def chat(
    client: httpx.Client, message: str, conversation_id: str | None = None, agent: str = "spoke"
) -> httpx.Response:
    body: dict[str, Any] = {"message": message}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    return client.post(CHAT.format(agent), json=body)


def test_a_conversation_keeps_its_history(
    client: httpx.Client, script: Script, scripted_llm: ScriptedOpenAIServer
) -> None:
    script(
        [
            Reply.tool_calls([("get_spoke", {"name": "crm-dev-neu"})], usage=(50, 5)),
            Reply.text("It has 3 subnets.", usage=(60, 6)),
            "Yes, westeurope.",
        ]
    )
    first = chat(client, "How many subnets has crm-dev-neu?")
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["reply"] == "It has 3 subnets." and body["stop_reason"] == "reply"
    assert body["tool_calls"] == [
        {"name": "get_spoke", "arguments": {"name": "crm-dev-neu"}, "outcome": "ok", "is_error": False,
         "server": "portal"}
    ]
    assert body["usage"] == {
        "prompt_tokens": 110,
        "completion_tokens": 11,
        "total_tokens": 121,
        "calls": 2,
        "cost": 0.0,
    }
    cid = body["conversation_id"]
    assert len(cid) >= 16

    second = chat(client, "And its region?", cid)
    assert second.status_code == 200, second.text
    assert (second.json()["conversation_id"], second.json()["reply"]) == (cid, "Yes, westeurope.")
    sent = scripted_llm.requests[-1].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["content"] == "How many subnets has crm-dev-neu?"
    assert sent[2]["tool_calls"][0]["function"]["name"] == "get_spoke"
    assert sent[4]["content"] == "It has 3 subnets." and sent[5]["content"] == "And its region?"


def test_each_message_without_an_id_starts_a_conversation(
    client: httpx.Client, script: Script, scripted_llm: ScriptedOpenAIServer
) -> None:
    script(["one", "two"])
    ids = {chat(client, "hello").json()["conversation_id"] for _ in range(2)}
    assert len(ids) == 2
    assert [m["role"] for m in scripted_llm.requests[-1].messages] == ["system", "user"]


def test_pull_requests_say_they_came_from_the_chat(
    client: httpx.Client, script: Script, chat_portal: PortalProcess
) -> None:
    api = PortalAPI(chat_portal.url, token=chat_portal.token)
    config = dict(api.get_spoke("crm-dev-neu")["config"], name="chattest-dev-weu")
    args = {
        "spoke_name": "chattest-dev-weu",
        "config": config,
        "title": "Add spoke chattest-dev-weu",
        "description": "t",
    }
    script([Reply.tool_calls([("create_spoke_pull_request", args)]), "Opened."])
    assert chat(client, "open it").status_code == 200
    (pr,) = api.list_pull_requests()
    assert pr["created_by"] == "portal-chat:spoke"


def test_the_integration_agent_gets_only_its_tools(
    client: httpx.Client, script: Script, scripted_llm: ScriptedOpenAIServer
) -> None:
    script(["Read-only here."])
    assert chat(client, "hi", agent="integration").status_code == 200
    assert scripted_llm.requests[-1].tool_names == INTEGRATION_TOOLS


def test_messages_to_one_conversation_do_not_interleave(
    client: httpx.Client, scripted_llm: ScriptedOpenAIServer
) -> None:
    scripted_llm.clear_requests()

    def slow_then_echo(request: ChatRequest) -> Reply:
        said = request.last_user_message or ""
        return Reply.text(f"re: {said}", delay_s=0.3 if said == "first" else 0.0)

    scripted_llm.responder = lambda request: Reply.text("start")
    cid = chat(client, "start").json()["conversation_id"]
    scripted_llm.responder = slow_then_echo
    scripted_llm.clear_requests()
    answers: dict[str, httpx.Response] = {}
    first = threading.Thread(target=lambda: answers.update(first=chat(client, "first", cid)))
    first.start()
    while not scripted_llm.requests:  # the first message is with the model: now send the second
        threading.Event().wait(0.01)
    with httpx.Client(base_url=str(client.base_url), headers=client.headers, timeout=30) as other:
        answers["second"] = chat(other, "second", cid)
    first.join()
    assert (
        answers["first"].json()["reply"] == "re: first" and answers["second"].json()["reply"] == "re: second"
    )
    second_request = scripted_llm.requests[1].messages
    # the second turn saw the whole first turn: it waited for it
    assert [m.get("content") for m in second_request[1:]] == [
        "start",
        "start",
        "first",
        "re: first",
        "second",
    ]


def test_unknown_agent(client: httpx.Client) -> None:
    answer = chat(client, "hi", agent="nope")
    assert answer.status_code == 404
    assert answer.json() == {"error": "unknown agent 'nope'; agents: integration, release-notes, spoke"}


def test_unknown_conversation(client: httpx.Client, script: Script) -> None:
    answer = chat(client, "hi", "no-such-conversation")
    assert answer.status_code == 404
    assert "unknown conversation 'no-such-conversation' for agent 'spoke'" in answer.json()["error"]
    script(["hi"])
    cid = chat(client, "hi").json()["conversation_id"]
    other_agent = chat(client, "hi", cid, agent="integration")  # an id belongs to one agent
    assert other_agent.status_code == 404


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"message": ""}, "message: String should have at least 1 character (got '')"),
        ({}, "message: Field required"),
        ({"message": "hi", "colour": "red"}, "colour: Extra inputs are not permitted (got 'red')"),
        ({"message": "x" * 20_001}, "message: String should have at most 20000 characters"),
    ],
    ids=["empty", "missing", "extra", "too-long"],
)
def test_bad_requests(client: httpx.Client, body: dict[str, Any], message: str) -> None:
    answer = client.post(CHAT.format("spoke"), json=body)
    assert answer.status_code == 400
    assert answer.json() == {"error": f"invalid chat request: {message}"}


def test_the_chat_needs_the_token(chat_portal: PortalProcess) -> None:
    answer = httpx.post(chat_portal.url + CHAT.format("spoke"), json={"message": "hi"})
    assert answer.status_code == 401


def test_a_failing_model_is_a_502_and_the_conversation_is_unchanged(
    client: httpx.Client, script: Script, scripted_llm: ScriptedOpenAIServer
) -> None:
    script(["hello", Reply.error(500, "model overloaded"), "better now"])
    cid = chat(client, "one").json()["conversation_id"]
    failed = chat(client, "two", cid)
    assert failed.status_code == 502
    assert "model overloaded" in failed.json()["error"]
    retried = chat(client, "two again", cid)
    assert retried.status_code == 200
    assert [m.get("content") for m in scripted_llm.requests[-1].messages[1:]] == ["one", "hello", "two again"]


def test_the_token_stays_out_of_the_portal_log(
    chat_portal: PortalProcess, client: httpx.Client, script: Script
) -> None:
    script([Reply.tool_calls([("list_spokes", {})]), "ok"])
    assert chat(client, "hi").status_code == 200
    assert chat_portal.token and chat_portal.token not in chat_portal.log_tail(10_000)


# In-process: paths that stop before the agent reaches the portal's MCP endpoint ----------------


@pytest.fixture(scope="module")
def app_config(tmp_path_factory: pytest.TempPathFactory) -> PortalConfig:
    closed_port = "http://127.0.0.1:9"  # discard port: nothing listens there
    return PortalConfig(
        data_dir=tmp_path_factory.mktemp("inproc") / "data", public_url=closed_port, token="t0ken-123456"
    )


def _post(config: PortalConfig, body: dict[str, Any]) -> httpx.Response:
    import asyncio

    async def go() -> httpx.Response:
        app = create_app(config, extra_routers=[build_chat_router()])
        transport = httpx.ASGITransport(app=app)
        headers = {"Authorization": f"Bearer {config.token}"}
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1", headers=headers
        ) as http:
            return await http.post(CHAT.format("spoke"), json=body)

    return asyncio.run(go())


def test_llm_not_configured_is_a_503_naming_the_variables(
    app_config: PortalConfig, kit_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL")
    answer = _post(app_config, {"message": "hi"})
    assert answer.status_code == 503
    error = answer.json()["error"]
    assert error.startswith("the agent's LLM is not configured: No LLM endpoint configured")
    assert all(name in error for name in ("AZURE_OPENAI_ENDPOINT", "OPENAI_API_KEY", "OPENAI_BASE_URL"))


def test_a_portal_the_agent_cannot_reach_is_a_502(
    app_config: PortalConfig, kit_env: dict[str, str], script: Script
) -> None:
    script(["never asked"])
    answer = _post(app_config, {"message": "hi"})
    assert answer.status_code == 502
    assert answer.json()["error"].startswith("MCP server 'portal' at http://127.0.0.1:9/mcp/ is not reachable")


@pytest.mark.parametrize(
    ("public_url", "server", "expected"),
    [
        ("http://127.0.0.1:8400", ("127.0.0.1", 8400), "http://127.0.0.1:8400"),
        ("http://localhost:8400/", None, "http://localhost:8400"),
        (
            "https://portal.example.com",
            ("0.0.0.0", 8400),
            "http://127.0.0.1:8400",
        ),  # wildcard bind → loopback
        ("https://portal.example.com", ("::", 8400), "http://[::1]:8400"),
        ("https://portal.example.com", ("10.1.2.3", 8400), "http://10.1.2.3:8400"),
        (
            "https://portal.example.com",
            None,
            "https://portal.example.com",
        ),  # no socket (e.g. a test transport)
    ],
)
def test_loopback_url(public_url: str, server: tuple[str, int] | None, expected: str) -> None:
    assert loopback_url(public_url, server) == expected


def test_serving_the_chat_does_not_import_openai_at_startup() -> None:
    code = (
        "import sys\n"
        "from agent_evals.packs.spoke.portal.server import default_routers\n"
        "routers = default_routers()\n"
        "assert [r.path for r in routers[0].routes] == ['/api/agents/{name}/chat'], routers\n"
        "assert 'openai' not in sys.modules, 'openai imported at startup'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


def test_the_live_routers_read_conversations_with_the_pack_given_or_named() -> None:
    """``authoring.live_routers``: the chat and the stored conversations on one store, the pack given as a
    pack or by the name a suite writes (a backend inside its own pack's package cannot import the pack)."""
    for pack in ("generic", GenericPack()):
        chat, stored = live_routers(pack)
        assert [r.path for r in chat.routes] == ["/api/agents/{name}/chat"]
        assert "/api/conversations" in [r.path for r in stored.routes]
    with pytest.raises(PackError, match="unknown pack 'nope'"):
        live_routers("nope")


def test_a_conversation_id_is_never_read_as_an_option() -> None:
    """Ids go on command lines (`agent-evals live promote <id>`): one starting with "-" was taken for
    an option, 1 time in 64."""
    ids = {new_conversation_id() for _ in range(2000)}
    assert len(ids) == 2000
    assert all(re.fullmatch(r"[0-9a-f]{32}", cid) for cid in ids)
