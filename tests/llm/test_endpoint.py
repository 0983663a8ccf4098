"""Endpoint construction rules and secret handling."""

from __future__ import annotations

import pytest

from agent_evals.llm.endpoint import Endpoint, Secret, redact, safe_url


def test_secret_hides_its_value_everywhere_but_reveal() -> None:
    secret = Secret("sk-abc123")
    assert (str(secret), repr(secret), f"{secret}") == ("***", "Secret('***')", "***")
    assert secret.reveal() == "sk-abc123"
    assert secret == Secret("sk-abc123") and secret != Secret("other")


def test_secret_cannot_be_empty() -> None:
    with pytest.raises(ValueError, match="cannot be empty"):
        Secret("")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://user:pw@host.example/v1?api-key=k#frag", "https://host.example/v1"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ],
)
def test_safe_url_drops_user_info_query_and_fragment(url: str, expected: str) -> None:
    assert safe_url(url) == expected


def test_redact_replaces_every_occurrence_but_ignores_tiny_values() -> None:
    assert redact("key sk-1234 and sk-1234 again", ["sk-1234"]) == "key *** and *** again"
    assert redact("a b c", ["a", ""]) == "a b c"  # too short to be a credential; would mangle text


def test_host_and_repr_are_safe() -> None:
    endpoint = Endpoint.compatible("http://u:secret-pw@localhost:11434/v1/", api_key="secret-key")
    assert endpoint.url == "http://u:secret-pw@localhost:11434/v1"
    assert endpoint.host == "localhost:11434"
    assert repr(endpoint) == "Endpoint(kind='compatible', url='http://localhost:11434/v1', auth='api_key')"
    assert set(endpoint.secrets()) == {"secret-key"}


def test_azure_auth_kinds() -> None:
    def azure(**kw: str) -> Endpoint:
        return Endpoint.azure("https://r.openai.azure.com", api_version="2024-10-21", **kw)

    assert azure(api_key="k").azure_auth == "api_key"
    assert azure(ad_token="t").azure_auth == "ad_token"
    assert azure().azure_auth == "default_credential"
    assert Endpoint.openai("k").azure_auth is None


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Endpoint("azure", "https://r", api_version=None), "azure endpoint needs an api_version"),
        (lambda: Endpoint("openai", "https://api.openai.com/v1"), "openai endpoint needs an API key"),
        (lambda: Endpoint("compatible", ""), "compatible endpoint needs a URL"),
        (
            lambda: Endpoint("bedrock", "https://x"),
            "unknown endpoint kind 'bedrock'; allowed: azure, openai, compatible",
        ),
        (
            lambda: Endpoint("azure", "https://r", Secret("k"), Secret("t"), api_version="v"),
            "either an API key or an Azure AD token, not both",
        ),
    ],
)
def test_invalid_endpoints_are_rejected(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]
