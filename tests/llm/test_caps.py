"""The completion cap per role: where it comes from, what is refused, the wrapper that applies it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from agent_evals.llm import ChatResponse, LLMConfigError
from agent_evals.llm.caps import DEFAULT_MAX_TOKENS, MAX_TOKENS_LIMIT, max_tokens_for, with_max_tokens


@pytest.mark.parametrize(
    ("role", "kwargs", "env", "cap"),
    [
        pytest.param("agent", {}, {}, 2048, id="agent default"),
        pytest.param("user", {}, {}, 300, id="user default"),
        pytest.param("judge", {}, {}, 800, id="judge default"),
        pytest.param("agent", {"default_max_tokens": 1024}, {}, 1024, id="agent.yaml over the default"),
        pytest.param("agent", {"default_max_tokens": 1024}, {"LLM_MAX_TOKENS_AGENT": "512"}, 512, id="env over agent.yaml"),
        pytest.param("agent", {"max_tokens": 64, "default_max_tokens": 1024}, {"LLM_MAX_TOKENS_AGENT": "512"}, 64,
                     id="explicit over everything"),
        pytest.param("user", {}, {"LLM_MAX_TOKENS_USER": " 40 ", "LLM_MAX_TOKENS_AGENT": "9"}, 40, id="each role its own"),
        pytest.param("judge", {}, {"LLM_MAX_TOKENS_JUDGE": ""}, 800, id="empty is unset"),
        pytest.param("user", {"max_tokens": MAX_TOKENS_LIMIT}, {}, MAX_TOKENS_LIMIT, id="the limit itself"),
    ],
)
def test_where_the_cap_comes_from(role: Any, kwargs: dict[str, int], env: dict[str, str], cap: int) -> None:
    assert max_tokens_for(role, env=env, **kwargs) == cap


@pytest.mark.parametrize(
    ("kwargs", "env", "message"),
    [
        ({"max_tokens": 0}, {}, "user_max_tokens must be a whole number of tokens from 1 to 32768, got 0"),
        ({"max_tokens": -5}, {}, "user_max_tokens must be a whole number of tokens from 1 to 32768, got -5"),
        ({"max_tokens": 40000}, {}, "user_max_tokens must be a whole number of tokens from 1 to 32768, got 40000"),
        ({"max_tokens": True}, {}, "user_max_tokens must be a whole number of tokens from 1 to 32768, got True"),
        ({}, {"LLM_MAX_TOKENS_USER": "0"}, "LLM_MAX_TOKENS_USER must be a whole number of tokens from 1 to 32768, got '0'"),
        ({}, {"LLM_MAX_TOKENS_USER": "lots"}, "LLM_MAX_TOKENS_USER must be a whole number of tokens from 1 to 32768, got 'lots'"),
        ({}, {"LLM_MAX_TOKENS_JUDGE": "1e9"}, "LLM_MAX_TOKENS_JUDGE must be a whole number of tokens from 1 to 32768, got '1e9'"),
        ({}, {"LLM_MAX_TOKENS_AGENT": "99999"}, "LLM_MAX_TOKENS_AGENT must be a whole number of tokens from 1 to 32768, got '99999'"),
    ],
)
def test_bad_caps_are_config_errors_naming_the_setting(kwargs: dict[str, Any], env: dict[str, str], message: str) -> None:
    with pytest.raises(LLMConfigError) as caught:
        max_tokens_for("user", env=env, setting="user_max_tokens", **kwargs)
    assert str(caught.value) == message
    assert caught.value.kind == "config"


def test_a_bad_variable_of_another_role_is_reported_too() -> None:
    # one typo anywhere is found at once, not when that role first runs
    with pytest.raises(LLMConfigError, match="LLM_MAX_TOKENS_JUDGE"):
        max_tokens_for("agent", env={"LLM_MAX_TOKENS_JUDGE": "-1"})


def test_unknown_role() -> None:
    with pytest.raises(ValueError, match="unknown role 'critic'; allowed: agent, user, judge"):
        max_tokens_for("critic", env={})  # type: ignore[arg-type]


def test_defaults_fit_the_roles() -> None:
    assert dict(DEFAULT_MAX_TOKENS) == {"agent": 2048, "user": 300, "judge": 800}


class Recording:
    """A chat model that remembers the keyword arguments of each call."""

    model = "m"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.closed = False

    async def complete(self, messages: Sequence[Any], **kwargs: Any) -> ChatResponse:
        self.calls.append(kwargs)
        return ChatResponse("ok")

    async def aclose(self) -> None:
        self.closed = True


class NoCapModel:
    """An older custom model whose complete takes no max_tokens."""

    model = "old"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, messages: Sequence[Any], *, tools: Any = None, temperature: Any = None) -> ChatResponse:
        self.calls += 1
        return ChatResponse("ok")


def test_the_wrapper_sends_its_cap_unless_the_caller_passes_one() -> None:
    inner = Recording()
    capped = with_max_tokens(inner, 100)

    async def calls() -> None:
        await capped.complete([], temperature=0.1)
        await capped.complete([], max_tokens=1)
        await capped.aclose()

    asyncio.run(calls())
    assert [c["max_tokens"] for c in inner.calls] == [100, 1]
    assert inner.calls[0]["temperature"] == 0.1
    assert capped.model == "m" and capped.inner is inner and inner.closed


def test_the_wrapper_calls_a_model_without_max_tokens_without_it() -> None:
    inner = NoCapModel()
    asyncio.run(with_max_tokens(inner, 100).complete([]))
    assert inner.calls == 1


@pytest.mark.parametrize("cap", [0, -1, MAX_TOKENS_LIMIT + 1])
def test_the_wrapper_refuses_a_bad_cap(cap: int) -> None:
    with pytest.raises(LLMConfigError, match=f"got {cap}"):
        with_max_tokens(Recording(), cap)
