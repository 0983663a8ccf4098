"""Where a chat model lives and how to authenticate: :class:`Endpoint`, plus secret handling.

An endpoint is one of three kinds (:data:`EndpointKind`):

``azure``
    Azure OpenAI: ``azure_endpoint`` (``https://<resource>.openai.azure.com``), an
    ``api_version``, and one credential: an API key, an Entra ID token, or — when
    neither is given — ``DefaultAzureCredential`` from the optional ``azure-identity``
    package. The model name is the deployment name.
``openai``
    OpenAI itself (``base_url`` defaults to ``https://api.openai.com/v1``); needs a key.
``compatible``
    Any OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio, the scripted test
    server) at ``base_url``; the key is optional.

Secrets are held in :class:`Secret`, whose ``str`` and ``repr`` never show the value;
only the code that builds the HTTP client's headers calls :meth:`Secret.reveal`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args
from urllib.parse import urlsplit, urlunsplit

EndpointKind = Literal["azure", "openai", "compatible"]
ENDPOINT_KINDS: tuple[str, ...] = get_args(EndpointKind)

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Placeholder key for OpenAI-compatible servers that need none (sent as the openai SDK sends it).
PLACEHOLDER_API_KEY = "not-needed"

AzureAuth = Literal["api_key", "ad_token", "default_credential"]


class Secret:
    """A credential that never shows itself in ``str``, ``repr``, f-strings or logs."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not value:
            raise ValueError("a Secret cannot be empty")
        self._value = value

    def reveal(self) -> str:
        """The raw value; call only where it is handed to the HTTP client."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    def __str__(self) -> str:
        return "***"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))


@dataclass(frozen=True, repr=False)
class Endpoint:
    """One place to send chat completions to. Build it with the class methods."""

    kind: EndpointKind
    url: str
    api_key: Secret | None = None
    azure_ad_token: Secret | None = None
    api_version: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ENDPOINT_KINDS:
            raise ValueError(f"unknown endpoint kind {self.kind!r}; allowed: {', '.join(ENDPOINT_KINDS)}")
        if not self.url:
            raise ValueError(f"{self.kind} endpoint needs a URL")
        if self.kind == "azure" and not self.api_version:
            raise ValueError("azure endpoint needs an api_version")
        if self.api_key is not None and self.azure_ad_token is not None:
            raise ValueError("give either an API key or an Azure AD token, not both")
        if self.kind == "openai" and self.api_key is None:
            raise ValueError("openai endpoint needs an API key")

    @classmethod
    def azure(
        cls, endpoint: str, *, api_version: str, api_key: str | None = None, ad_token: str | None = None
    ) -> Endpoint:
        """Azure OpenAI; with neither ``api_key`` nor ``ad_token`` it uses DefaultAzureCredential."""
        return cls(
            "azure", endpoint.rstrip("/"), _secret(api_key), _secret(ad_token), api_version=api_version
        )

    @classmethod
    def openai(cls, api_key: str, *, base_url: str = OPENAI_DEFAULT_BASE_URL) -> Endpoint:
        """OpenAI (``base_url`` is overridable, e.g. for a proxy or a test server)."""
        return cls("openai", base_url.rstrip("/"), _secret(api_key))

    @classmethod
    def compatible(cls, base_url: str, *, api_key: str | None = None) -> Endpoint:
        """Any OpenAI-compatible server; ``base_url`` usually ends in ``/v1``."""
        return cls("compatible", base_url.rstrip("/"), _secret(api_key))

    def __repr__(self) -> str:
        auth = self.azure_auth or ("api_key" if self.api_key else "none")
        version = f", api_version={self.api_version!r}" if self.api_version else ""
        return f"Endpoint(kind={self.kind!r}, url={self.display_url!r}, auth={auth!r}{version})"

    @property
    def azure_auth(self) -> AzureAuth | None:
        """How an Azure endpoint authenticates (None for the other kinds)."""
        if self.kind != "azure":
            return None
        if self.api_key is not None:
            return "api_key"
        return "ad_token" if self.azure_ad_token is not None else "default_credential"

    @property
    def display_url(self) -> str:
        """The URL without user info, query or fragment: safe to log."""
        return safe_url(self.url)

    @property
    def host(self) -> str:
        """``host[:port]`` for messages such as "model x at <host> unreachable"."""
        return urlsplit(self.url).netloc.rpartition("@")[2] or self.display_url

    def secrets(self) -> tuple[str, ...]:
        """The raw secret values, for :func:`redact`."""
        return tuple(s.reveal() for s in (self.api_key, self.azure_ad_token) if s is not None)


def _secret(value: str | None) -> Secret | None:
    return Secret(value) if value else None


def safe_url(url: str) -> str:
    """``url`` without user info, query string or fragment (they may carry credentials)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", "")) or url


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace every secret value in ``text`` by ``***`` (defence in depth for error texts)."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text
