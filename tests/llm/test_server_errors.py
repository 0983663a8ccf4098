"""What a failed call says: the server's own words, shortened to one line, and a hint."""

from __future__ import annotations

import pytest

from agent_evals.llm.endpoint import Endpoint
from agent_evals.llm.server_errors import MAX_SERVER_TEXT, error_text, shorten, status_failure, summarize

# What llama-cpp-python's server answered (HTTP 500) to an assistant message with "content": null.
LLAMA_NULL_CONTENT = (
    "7 validation errors:\n"
    "  {'type': 'literal_error', 'loc': ('body', 'messages', 1, 'ChatCompletionRequestSystemMessage', 'role'), "
    "'msg': \"Input should be 'system'\", 'input': 'assistant', 'ctx': {'expected': \"'system'\"}}\n"
    "  {'type': 'literal_error', 'loc': ('body', 'messages', 1, 'ChatCompletionRequestUserMessage', 'role'), "
    "'msg': \"Input should be 'user'\", 'input': 'assistant', 'ctx': {'expected': \"'user'\"}}\n"
    "  {'type': 'string_type', 'loc': ('body', 'messages', 1, 'ChatCompletionRequestAssistantMessage', 'content'), "
    "'msg': 'Input should be a valid string', 'input': None}\n"
    "  {'type': 'missing', 'loc': ('body', 'messages', 1, 'ChatCompletionRequestToolMessage', 'tool_call_id'), "
    "'msg': 'Field required', 'input': {'role': 'assistant', 'content': None}}\n"
)
KEY = "sk-errors-SECRET-123456"
COMPATIBLE = Endpoint.compatible("http://127.0.0.1:8080/v1")
NO_V1 = Endpoint.compatible("http://127.0.0.1:8080")
KEYED = Endpoint.compatible("http://127.0.0.1:8080/v1", api_key=KEY)
AZURE = Endpoint.azure("https://res.openai.azure.com", api_version="2024-10-21", api_key=KEY)
OPENAI = Endpoint.openai(KEY)


def test_a_validation_dump_is_cut_to_what_matters() -> None:
    assert summarize(LLAMA_NULL_CONTENT) == (
        "7 validation errors, e.g. messages[1].content: Input should be a valid string"
    )


def test_only_discriminator_noise_is_still_shown() -> None:
    text = "1 validation error:\n  {'type': 'missing', 'loc': ('body', 'tools', 0, 'function', 'parameters'), 'msg': 'Field required'}"
    assert summarize(text) == "validation error, e.g. tools[0].function.parameters: Field required"


def test_other_text_is_kept_and_shortened_to_one_line() -> None:
    assert summarize("model is loading") == "model is loading"
    long = "word " * 100
    short = shorten(long)
    assert len(short) == MAX_SERVER_TEXT and short.endswith("…") and "\n" not in shorten("a\nb")


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ({"error": {"message": "busy"}}, "busy"),
        ({"error": "plain"}, "plain"),
        ({"detail": "Not Found"}, "{'detail': 'Not Found'}"),
        (None, "(empty body)"),
        ({"error": {"message": ""}}, "{'error': {'message': ''}}"),
    ],
)
def test_error_text_forms(body: object, text: str) -> None:
    assert error_text(body) == text


@pytest.mark.parametrize(
    ("status", "endpoint", "hint"),
    [
        (404, NO_V1, "check that OPENAI_BASE_URL ends with /v1 (it is http://127.0.0.1:8080)"),
        (404, COMPATIBLE, "check the model name (AGENT_MODEL, USER_MODEL, JUDGE_MODEL) and the base URL"),
        (404, AZURE, "check the deployment name (on Azure the model name is the deployment) and AZURE_OPENAI_ENDPOINT"),
        (401, COMPATIBLE, "the server wants a key: set OPENAI_API_KEY"),
        (401, KEYED, "check OPENAI_API_KEY"),
        (403, OPENAI, "check OPENAI_API_KEY"),
        (401, AZURE, "check AZURE_OPENAI_API_KEY or AZURE_OPENAI_AD_TOKEN (and that it belongs to this resource)"),
        (500, COMPATIBLE, ""),
        (400, COMPATIBLE, ""),
    ],
)
def test_hints_for_common_mistakes(status: int, endpoint: Endpoint, hint: str) -> None:
    assert status_failure(status, {"error": {"message": "nope"}}, {}, endpoint).hint == hint


def test_a_request_too_long_for_the_context_says_so() -> None:
    body = {"error": {"message": "This model's maximum context length is 8192 tokens. However, you requested 10395 "
                                 "tokens", "code": "context_length_exceeded"}}
    failure = status_failure(400, body, {}, COMPATIBLE)
    assert failure.kind == "rejected" and "context window" in failure.hint


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "rate_limited"), (500, "server_error"), (503, "server_error"), (408, "timeout"), (422, "rejected")]
)
def test_status_decides_the_kind(status: int, kind: str) -> None:
    assert status_failure(status, None, {}, COMPATIBLE).kind == kind


def test_the_key_is_redacted_from_what_the_server_said() -> None:
    failure = status_failure(401, {"error": {"message": f"key {KEY} is wrong"}}, {}, KEYED)
    assert failure.detail == "key *** is wrong"
