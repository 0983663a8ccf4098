"""The scripted OpenAI-compatible server, exercised over plain HTTP (no SDK)."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from agent_evals.testing.scripted_openai import (
    ChatRequest,
    HoldAfterTool,
    QueueResponder,
    Reply,
    ScriptedOpenAIServer,
    fixed_latency,
)

HELLO = [{"role": "user", "content": "hello"}]


def post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method="POST", headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def chat(server: ScriptedOpenAIServer, model: str = "m", **extra: Any) -> tuple[int, dict[str, str], Any]:
    status, headers, raw = post(
        f"{server.base_url}/chat/completions", {"model": model, "messages": HELLO, **extra}
    )
    return status, headers, json.loads(raw)


def test_text_reply_has_the_chat_completions_shape(server: ScriptedOpenAIServer) -> None:
    server.responder = lambda request: Reply.text("hi there", usage=(12, 3))
    status, _, body = chat(server, "gpt-test")
    assert status == 200
    assert body["object"] == "chat.completion"
    assert body["id"].startswith("chatcmpl-")
    assert isinstance(body["created"], int)
    assert body["model"] == "gpt-test"
    assert body["choices"] == [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "hi there"},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ]
    assert body["usage"] == {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}


def test_default_responder_echoes_and_estimates_usage(server: ScriptedOpenAIServer) -> None:
    _, _, body = chat(server)
    assert body["choices"][0]["message"]["content"] == "echo: hello"
    usage = body["usage"]
    assert usage["prompt_tokens"] >= 1 and usage["completion_tokens"] >= 1
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_tool_calls_encode_dicts_and_pass_strings_raw(server: ScriptedOpenAIServer) -> None:
    server.responder = lambda r: Reply.tool_calls(
        [("get_spoke", {"name": "x"}), ("bad", "{not json"), ("named", {}, "call_fixed")]
    )
    _, _, body = chat(server)
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] is None
    assert choice["message"]["tool_calls"] == [
        {
            "id": "call_0_0",
            "type": "function",
            "function": {"name": "get_spoke", "arguments": '{"name": "x"}'},
        },
        {"id": "call_0_1", "type": "function", "function": {"name": "bad", "arguments": "{not json"}},
        {"id": "call_fixed", "type": "function", "function": {"name": "named", "arguments": "{}"}},
    ]


def test_error_reply_sends_status_headers_and_openai_error_body(server: ScriptedOpenAIServer) -> None:
    server.responder = lambda r: Reply.error(429, "slow down", headers={"Retry-After": "1"})
    status, headers, body = chat(server)
    assert status == 429
    assert headers["Retry-After"] == "1"
    assert body["error"]["message"] == "slow down"


def test_malformed_reply_is_sent_verbatim(server: ScriptedOpenAIServer) -> None:
    server.responder = lambda r: Reply.malformed("{not json", content_type="text/plain")
    status, headers, raw = post(f"{server.base_url}/chat/completions", {"model": "m", "messages": HELLO})
    assert (status, raw) == (200, b"{not json")
    assert headers["Content-Type"] == "text/plain"


def test_azure_path_records_deployment_query_and_headers(server: ScriptedOpenAIServer) -> None:
    url = f"{server.azure_endpoint}/openai/deployments/my-dep/chat/completions?api-version=2024-10-21"
    status, _, raw = post(url, {"messages": HELLO, "temperature": 0.2}, {"api-key": "k"})
    assert status == 200
    assert json.loads(raw)["model"] == "my-dep"
    request = server.requests[-1]
    assert (request.deployment, request.model, request.is_azure) == ("my-dep", "my-dep", True)
    assert request.api_version == "2024-10-21"
    assert request.headers["api-key"] == "k"
    assert request.temperature == 0.2


def test_unknown_path_is_404_naming_the_served_paths(server: ScriptedOpenAIServer) -> None:
    # a client configured without "/v1" must fail loudly, not get a reply
    status, _, raw = post(f"{server.url}/chat/completions", {"model": "m", "messages": HELLO})
    assert status == 404
    assert "/v1/chat/completions" in json.loads(raw)["error"]["message"]
    assert server.requests == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"{not json", "not JSON"),
        ({"model": "m"}, "'messages' list"),
        ({"model": "m", "messages": HELLO, "stream": True}, "stream=true"),
    ],
)
def test_bad_requests_are_400_with_reason(server: ScriptedOpenAIServer, body: Any, expected: str) -> None:
    status, _, raw = post(f"{server.base_url}/chat/completions", body)
    assert status == 400
    assert expected in json.loads(raw)["error"]["message"]


def test_queue_responder_pops_per_model_in_order(server: ScriptedOpenAIServer) -> None:
    script = QueueResponder({"agent-model": ["a1", Reply.text("a2")], "user-model": ["u1"]})
    server.responder = script
    contents = [
        chat(server, model)[2]["choices"][0]["message"]["content"]
        for model in ("agent-model", "user-model", "agent-model")
    ]
    assert contents == ["a1", "u1", "a2"]
    assert script.remaining() == {"agent-model": 0, "user-model": 0}
    assert script.served() == {"agent-model": 2, "user-model": 1}


def test_queue_responder_empty_queue_is_a_clear_500(server: ScriptedOpenAIServer) -> None:
    server.responder = QueueResponder({"agent-model": ["only one"]})
    chat(server, "agent-model")
    status, headers, body = chat(server, "agent-model")
    assert status == 500
    assert (
        body["error"]["message"]
        == "QueueResponder: no scripted reply left for model 'agent-model' (1 served)"
    )
    assert headers["x-should-retry"] == "false"
    status, _, body = chat(server, "other")
    assert body["error"]["message"] == "QueueResponder: no queue for model 'other' (queues: agent-model)"


def test_queue_responder_list_serves_any_model(server: ScriptedOpenAIServer) -> None:
    server.responder = QueueResponder(["first", "second"])
    assert [chat(server, m)[2]["choices"][0]["message"]["content"] for m in ("a", "b")] == ["first", "second"]


def test_responder_exception_becomes_500_with_its_message(server: ScriptedOpenAIServer) -> None:
    def broken(request: ChatRequest) -> Reply:
        raise KeyError("nope")

    server.responder = broken
    status, _, body = chat(server)
    assert status == 500
    assert body["error"]["message"] == "responder raised KeyError: 'nope'"


def test_requests_are_recorded_with_tools_temperature_and_order(server: ScriptedOpenAIServer) -> None:
    tools = [{"type": "function", "function": {"name": "get_spoke", "parameters": {}}}]
    chat(server, tools=tools, temperature=0)
    chat(server)
    first, second = server.requests
    assert (first.index, second.index) == (0, 1)
    assert first.tools == tools and first.tool_names == ["get_spoke"]
    assert first.temperature == 0.0 and second.temperature is None and second.tools is None
    assert first.last_user_message == "hello"
    assert first.path == "/v1/chat/completions" and not first.is_azure


def test_recorded_requests_are_bounded() -> None:
    with ScriptedOpenAIServer(max_recorded=2) as server:
        for _ in range(3):
            chat(server)
        assert [r.index for r in server.requests] == [1, 2]
        assert server.request_count == 3
        server.clear_requests()
        assert server.requests == []


def test_delays_run_concurrently() -> None:
    # 8 requests must be answered side by side (benchmarks run 8 conversations at once): each reply
    # waits until all 8 requests are in, which only a server answering them at once lets happen
    together = threading.Barrier(8)

    def reply(_: ChatRequest) -> Reply:
        together.wait(timeout=60)
        return Reply.text("ok", delay_s=0.05)

    with ScriptedOpenAIServer(reply) as server:
        statuses: list[int] = []
        threads = [threading.Thread(target=lambda: statuses.append(chat(server)[0])) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert server.max_in_flight == 8
    assert statuses == [200] * 8


def test_fixed_latency_adds_to_the_reply_delay() -> None:
    responder = fixed_latency(lambda r: Reply.text("x").with_delay(0.1), 0.2)
    request = ChatRequest("/v1/chat/completions", "m", [], None, None, {}, {}, {})
    assert responder(request).delay_s == pytest.approx(0.3)


def test_hold_after_tool_holds_only_the_reply_to_that_tools_result() -> None:
    def request(messages: list[dict[str, Any]]) -> ChatRequest:
        return ChatRequest("/v1/chat/completions", "m", messages, None, None, {}, {}, {})

    def called(name: str, call_id: str) -> list[dict[str, Any]]:
        return [{"role": "user", "content": "go"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "other", "arguments": "{}"}},
                    {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": call_id, "content": "ok"}]

    DONE = Reply.text("done").message  # noqa: N806
    hold = HoldAfterTool(lambda r: Reply.text("done"), "open_pr", limit_s=60)
    assert hold(request(called("other_tool", "b"))).message == DONE  # another tool: not held
    assert hold(request(HELLO)).message == DONE
    assert not hold.held.is_set()
    replies: list[Any] = []
    waiting = threading.Thread(target=lambda: replies.append(hold(request(called("open_pr", "b"))).message))
    waiting.start()
    assert hold.held.wait(60)
    assert replies == [] and waiting.is_alive()  # held until released
    hold.release()
    waiting.join(60)
    assert replies == [DONE]


def test_stop_does_not_wait_for_pending_delays() -> None:
    server = ScriptedOpenAIServer(lambda r: Reply.text("late", delay_s=600)).start()
    thread = threading.Thread(target=lambda: chat(server), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while server.in_flight == 0 and time.monotonic() < deadline:  # the request is being delayed
        time.sleep(0.01)
    stopping = threading.Thread(target=server.stop, daemon=True)
    stopping.start()
    stopping.join(timeout=60)  # a guard: a stop that waited for the delay would take 600 s
    assert not stopping.is_alive()
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.url
