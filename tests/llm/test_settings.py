"""Choosing the endpoint and model names from the environment; secrets kept out."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys

import pytest

from agent_evals.llm import ChatResponse, LLMConfigError, OpenAIChatModel
from agent_evals.llm.settings import (
    NO_ENDPOINT_MESSAGE,
    azure_identity_available,
    chat_model,
    describe_llm_settings,
    llm_configured,
    load_settings,
    resolve_model,
)
from agent_evals.testing.scripted_openai import QueueResponder, Reply, ScriptedOpenAIServer

KEY = "sk-settings-SECRET-abcdef"
TOKEN = "eyJ-entra-SECRET-token"
AZURE = {"AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com/", "AZURE_OPENAI_API_KEY": KEY}
AZURE_IDENTITY_INSTALLED = azure_identity_available()


def model_for(role: str, env: dict[str, str], **kwargs: str) -> OpenAIChatModel:
    model = chat_model(role, env=env, **kwargs)  # type: ignore[arg-type]
    assert isinstance(model, OpenAIChatModel)
    return model


# --- endpoint selection ------------------------------------------------------------------


def test_azure_with_key() -> None:
    endpoint = model_for("agent", {**AZURE, "AGENT_MODEL": "gpt4o-dep"}).endpoint
    assert (endpoint.kind, endpoint.url, endpoint.api_version) == (
        "azure",
        "https://res.openai.azure.com",
        "2024-10-21",
    )
    assert endpoint.azure_auth == "api_key" and endpoint.api_key and endpoint.api_key.reveal() == KEY


def test_azure_with_ad_token_and_api_version() -> None:
    env = {
        "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com",
        "AZURE_OPENAI_AD_TOKEN": TOKEN,
        "AZURE_OPENAI_API_VERSION": "2025-01-01-preview",
    }
    endpoint = load_settings(env).endpoint
    assert (endpoint.azure_auth, endpoint.api_version) == ("ad_token", "2025-01-01-preview")


def test_azure_key_wins_over_token() -> None:
    endpoint = load_settings({**AZURE, "AZURE_OPENAI_AD_TOKEN": TOKEN}).endpoint
    assert endpoint.azure_auth == "api_key" and endpoint.azure_ad_token is None


@pytest.mark.skipif(AZURE_IDENTITY_INSTALLED, reason="azure-identity is installed here")
def test_azure_without_credential_or_azure_identity_names_the_choices() -> None:
    with pytest.raises(LLMConfigError) as caught:
        load_settings({"AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com"})
    assert str(caught.value) == (
        "AZURE_OPENAI_ENDPOINT is set but no credential: set AZURE_OPENAI_API_KEY or "
        "AZURE_OPENAI_AD_TOKEN, or install azure-identity to use DefaultAzureCredential"
    )


def test_azure_wins_over_openai_settings() -> None:
    env = {**AZURE, "OPENAI_BASE_URL": "http://localhost:8000/v1", "OPENAI_API_KEY": "other"}
    assert load_settings(env).endpoint.kind == "azure"


def test_base_url_means_compatible_server_key_optional() -> None:
    without = load_settings({"OPENAI_BASE_URL": "http://localhost:11434/v1/"}).endpoint
    assert (without.kind, without.url, without.api_key) == ("compatible", "http://localhost:11434/v1", None)
    with_key = load_settings({"OPENAI_BASE_URL": "http://vllm:8000/v1", "OPENAI_API_KEY": KEY}).endpoint
    assert with_key.kind == "compatible" and with_key.api_key and with_key.api_key.reveal() == KEY


def test_api_key_alone_means_openai() -> None:
    endpoint = load_settings({"OPENAI_API_KEY": KEY}).endpoint
    assert (endpoint.kind, endpoint.url) == ("openai", "https://api.openai.com/v1")


def test_blank_values_count_as_unset() -> None:
    assert load_settings({"AZURE_OPENAI_ENDPOINT": "  ", "OPENAI_API_KEY": KEY}).endpoint.kind == "openai"


def test_nothing_set_is_one_error_naming_all_three_kinds() -> None:
    with pytest.raises(LLMConfigError) as caught:
        load_settings({})
    message = str(caught.value)
    assert message == NO_ENDPOINT_MESSAGE
    for name in ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        assert name in message


def test_chat_model_with_nothing_set_reports_endpoint_and_model_together() -> None:
    with pytest.raises(LLMConfigError) as caught:
        chat_model("judge", env={})
    assert str(caught.value) == (
        "LLM settings are incomplete:\n"
        f"- {NO_ENDPOINT_MESSAGE}\n"
        "- No model for role 'judge': set JUDGE_MODEL (or AGENT_MODEL, which every role falls back to) "
        "to the model or Azure deployment name"
    )


def test_missing_model_names_the_variable() -> None:
    with pytest.raises(LLMConfigError) as caught:
        chat_model("agent", env={"OPENAI_API_KEY": KEY})
    assert (
        str(caught.value)
        == "No model for role 'agent': set AGENT_MODEL to the model or Azure deployment name"
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"OPENAI_BASE_URL": "localhost:11434/v1"}, "OPENAI_BASE_URL must be an http:// or https:// URL"),
        ({"LLM_MAX_RETRIES": "many"}, "LLM_MAX_RETRIES must be a whole number from 0 to 10, got 'many'"),
        ({"LLM_MAX_RETRIES": "11"}, "LLM_MAX_RETRIES must be a whole number from 0 to 10, got '11'"),
        ({"LLM_MAX_RETRIES": "-1"}, "LLM_MAX_RETRIES must be a whole number"),
        ({"LLM_TIMEOUT_S": "0"}, "LLM_TIMEOUT_S must be a number of seconds above 0"),
        ({"LLM_TIMEOUT_S": "fast"}, "LLM_TIMEOUT_S must be a number of seconds above 0"),
        ({"LLM_PRICES": "{"}, "LLM_PRICES is not valid JSON"),
    ],
)
def test_invalid_values_are_config_errors(env: dict[str, str], message: str) -> None:
    full = {"OPENAI_API_KEY": KEY, **env}
    with pytest.raises(LLMConfigError, match="^" + message.replace("(", r"\(").replace(")", r"\)")[:40]):
        load_settings(full)
    assert not llm_configured(full)


def test_several_problems_come_in_one_error() -> None:
    with pytest.raises(LLMConfigError) as caught:
        load_settings({"OPENAI_API_KEY": KEY, "LLM_MAX_RETRIES": "x", "LLM_TIMEOUT_S": "-3"})
    lines = str(caught.value).splitlines()
    assert lines[0] == "LLM settings are incomplete:"
    assert [line.split(" must")[0] for line in lines[1:]] == ["- LLM_MAX_RETRIES", "- LLM_TIMEOUT_S"]


def test_retry_and_timeout_knobs() -> None:
    settings = load_settings({"OPENAI_API_KEY": KEY, "LLM_MAX_RETRIES": "0", "LLM_TIMEOUT_S": "2.5"})
    assert (settings.retry.max_attempts, settings.timeout_s) == (1, 2.5)
    defaults = load_settings({"OPENAI_API_KEY": KEY})
    assert (defaults.retry.max_attempts, defaults.timeout_s) == (4, 60.0)


def test_prices_from_env_reach_the_model() -> None:
    env = {"OPENAI_API_KEY": KEY, "LLM_PRICES": '{"local": [1, 1]}'}
    assert load_settings(env).prices.price_for("local") is not None


# --- model per role ----------------------------------------------------------------------

ALL_ROLES = {"AGENT_MODEL": "a-env", "USER_MODEL": "u-env", "JUDGE_MODEL": "j-env"}


@pytest.mark.parametrize(
    ("role", "env", "kwargs", "expected"),
    [
        ("agent", ALL_ROLES, {"model": "explicit"}, ("explicit", "explicit model")),
        ("agent", ALL_ROLES, {"default_model": "dflt"}, ("a-env", "AGENT_MODEL")),
        ("agent", {}, {"default_model": "dflt"}, ("dflt", "default model")),
        ("user", ALL_ROLES, {}, ("u-env", "USER_MODEL")),
        ("judge", ALL_ROLES, {"default_model": "dflt"}, ("j-env", "JUDGE_MODEL")),
        ("user", {"AGENT_MODEL": "a-env"}, {"default_model": "dflt"}, ("dflt", "default model")),
        ("user", {"AGENT_MODEL": "a-env"}, {}, ("a-env", "AGENT_MODEL")),
        ("judge", {"AGENT_MODEL": "a-env", "JUDGE_MODEL": " "}, {}, ("a-env", "AGENT_MODEL")),
        ("agent", {"USER_MODEL": "u-env"}, {}, (None, "unset")),  # the agent never borrows another role's
        ("judge", {}, {"model": "  "}, (None, "unset")),
    ],
)
def test_model_precedence(role: str, env: dict[str, str], kwargs: dict[str, str], expected: tuple) -> None:
    assert resolve_model(role, env=env, **kwargs) == expected  # type: ignore[arg-type]


def test_chat_model_uses_the_resolved_name() -> None:
    env = {"OPENAI_API_KEY": KEY, "AGENT_MODEL": "gpt-4.1"}
    assert model_for("judge", env).model == "gpt-4.1"
    assert model_for("judge", env, model="o4-mini").model == "o4-mini"


def test_unknown_role_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown role 'critic'; allowed: agent, user, judge"):
        resolve_model("critic", env={})  # type: ignore[arg-type]


# --- describing without secrets ----------------------------------------------------------


def test_describe_azure() -> None:
    env = {**AZURE, "AGENT_MODEL": "gpt4o-dep", "USER_MODEL": "mini-dep"}
    assert describe_llm_settings(env) == (
        "LLM: azure at https://res.openai.azure.com (api-version 2024-10-21, auth: api key); "
        "models: agent=gpt4o-dep (AGENT_MODEL), user=mini-dep (USER_MODEL), judge=gpt4o-dep (AGENT_MODEL); "
        "retries: 3, timeout: 60 s per attempt; max_tokens: agent 2048, user 300, judge 800; tool_choice: auto"
    )


def test_describe_compatible_and_unconfigured() -> None:
    compatible = describe_llm_settings(
        {"OPENAI_BASE_URL": "http://localhost:11434/v1", "LLM_TIMEOUT_S": "300"}
    )
    assert compatible.startswith(
        "LLM: compatible at http://localhost:11434/v1 (no API key); models: agent=unset"
    )
    assert "timeout: 300 s per attempt;" in compatible
    assert describe_llm_settings({}).startswith(f"LLM: not configured ({NO_ENDPOINT_MESSAGE})")


def test_secrets_never_shown(caplog: pytest.LogCaptureFixture) -> None:
    # credentials in the URL (user info, query) are dropped too
    env = {
        **AZURE,
        "AZURE_OPENAI_ENDPOINT": f"https://user:{KEY}@res.openai.azure.com/?key={KEY}",
        "AZURE_OPENAI_AD_TOKEN": TOKEN,
        "AGENT_MODEL": "dep",
    }
    with caplog.at_level(logging.DEBUG):
        model = model_for("agent", env)
        settings = load_settings(env)
        shown = [describe_llm_settings(env), repr(model), repr(settings), str(settings.endpoint)]
    try:
        chat_model("user", env={**env, "LLM_TIMEOUT_S": "x", "AGENT_MODEL": ""})
    except LLMConfigError as exc:
        shown.append(str(exc))
    for text in [*shown, caplog.text]:
        assert KEY not in text and TOKEN not in text
    assert "res.openai.azure.com" in shown[0]


def test_llm_configured() -> None:
    assert llm_configured({"OPENAI_API_KEY": KEY})  # a model name is not required
    assert llm_configured({"OPENAI_BASE_URL": "http://localhost:8000/v1"})
    assert not llm_configured({})
    assert not llm_configured({"AGENT_MODEL": "gpt-4o"})


def test_end_to_end_from_env_against_scripted_server(server: ScriptedOpenAIServer) -> None:
    env = {"AZURE_OPENAI_ENDPOINT": server.azure_endpoint, "AZURE_OPENAI_API_KEY": KEY, "USER_MODEL": "sim"}
    model = model_for("user", env)

    async def call() -> ChatResponse:
        async with model:
            return await model.complete([{"role": "user", "content": "hi"}])

    response = asyncio.run(call())
    assert response.content == "echo: hi"
    assert server.requests[0].deployment == "sim"
    assert server.requests[0].headers["api-key"] == KEY


def test_importing_the_package_loads_no_http_client_and_a_call_no_sdk(server: ScriptedOpenAIServer) -> None:
    code = (
        "import asyncio, sys, agent_evals.llm, agent_evals.llm.types\n"
        "from agent_evals.llm import Endpoint, OpenAIChatModel\n"
        "loaded = 'httpx2' in sys.modules\n"
        f"model = OpenAIChatModel(Endpoint.compatible({server.base_url!r}), 'm')\n"
        "reply = asyncio.run(model.complete([{'role': 'user', 'content': 'hi'}]))\n"
        "print(loaded, reply.content, 'httpx2' in sys.modules, 'openai' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "echo:", "hi", "True", "False"]


def test_documented_scripted_flow() -> None:
    # the example in docs/llm.md ("Testing without an endpoint"), run for real
    script = QueueResponder(
        {
            "agent-model": [Reply.tool_calls([("get_spoke", {"name": "alpha"})]), "alpha has 3 routes."],
            "user-model": ["Thanks, that's all."],
        }
    )
    tools = [{"type": "function", "function": {"name": "get_spoke", "parameters": {"type": "object"}}}]
    with ScriptedOpenAIServer(script) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "AGENT_MODEL": "agent-model", "USER_MODEL": "user-model"}
        agent, user = model_for("agent", env), model_for("user", env)

        async def conversation() -> list[ChatResponse]:
            async with agent, user:
                history = [{"role": "user", "content": "How many routes has alpha?"}]
                first = await agent.complete(history, tools=tools)
                history += [
                    first.as_message(),
                    {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": '{"routes": 3}'},
                ]
                second = await agent.complete(history, tools=tools)
                reply = await user.complete([{"role": "user", "content": second.content or ""}])
                return [first, second, reply]

        first, second, reply = asyncio.run(conversation())
        assert server.requests[0].tool_names == ["get_spoke"]
        assert server.requests[1].messages[-1]["tool_call_id"] == first.tool_calls[0].id
    assert (first.tool_calls[0].raw_arguments, second.content, reply.content) == (
        '{"name": "alpha"}',
        "alpha has 3 routes.",
        "Thanks, that's all.",
    )
    assert script.remaining() == {"agent-model": 0, "user-model": 0}


# --- tool_choice and completion caps ----------------------------------------------------

BASE = {"OPENAI_BASE_URL": "http://localhost:8080/v1", "AGENT_MODEL": "m"}


@pytest.mark.parametrize("value", ["auto", "required", "none", "omit"])
def test_tool_choice_from_the_environment(value: str) -> None:
    assert load_settings({**BASE, "LLM_TOOL_CHOICE": value}).tool_choice == value


def test_tool_choice_defaults_to_auto_and_a_bad_one_names_the_allowed_set() -> None:
    assert load_settings(BASE).tool_choice == "auto"
    with pytest.raises(LLMConfigError) as caught:
        chat_model("agent", env={**BASE, "LLM_TOOL_CHOICE": "Auto"})
    assert str(caught.value) == "LLM_TOOL_CHOICE must be one of auto, required, none, omit, got 'Auto'"


def test_each_role_gets_its_cap() -> None:
    env = {**BASE, "LLM_MAX_TOKENS_USER": "64"}
    assert [model_for(role, env).max_tokens for role in ("agent", "user", "judge")] == [2048, 64, 800]
    assert model_for("agent", env, default_max_tokens=1000).max_tokens == 1000  # type: ignore[arg-type]
    assert model_for("user", env, max_tokens=5).max_tokens == 5  # type: ignore[arg-type]


def test_bad_caps_are_reported_with_the_other_problems() -> None:
    env = {**BASE, "LLM_MAX_TOKENS_AGENT": "0", "LLM_MAX_TOKENS_JUDGE": "40000", "LLM_TIMEOUT_S": "-1"}
    with pytest.raises(LLMConfigError) as caught:
        chat_model("agent", env=env)
    message = str(caught.value)
    assert message.startswith("LLM settings are incomplete:")
    assert "- LLM_MAX_TOKENS_AGENT must be a whole number of tokens from 1 to 32768, got '0'" in message
    assert "- LLM_MAX_TOKENS_JUDGE must be a whole number of tokens from 1 to 32768, got '40000'" in message
    assert "LLM_TIMEOUT_S" in message


def test_a_bad_explicit_cap_names_the_argument() -> None:
    with pytest.raises(LLMConfigError, match="max_tokens must be a whole number of tokens from 1 to 32768, got 0"):
        chat_model("agent", env=BASE, max_tokens=0)


def test_the_cap_and_tool_choice_reach_the_server(server: ScriptedOpenAIServer) -> None:
    env = {"OPENAI_BASE_URL": server.base_url, "USER_MODEL": "sim", "LLM_TOOL_CHOICE": "required"}
    model = model_for("user", env)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]

    async def call() -> None:
        async with model:
            await model.complete([{"role": "user", "content": "hi"}], tools=tools)
            await model.complete([{"role": "user", "content": "hi"}], max_tokens=7)

    asyncio.run(call())
    first, second = (r.body for r in server.requests)
    assert (first["max_tokens"], first["tool_choice"]) == (300, "required")
    assert second["max_tokens"] == 7 and "tool_choice" not in second
