"""Keep secrets out of results, transcripts and cassettes.

Tokens come from the environment only. As a last line of defence, anything the
kit writes or returns passes through :func:`redact`, which replaces the value of
every secret-looking environment variable (``*TOKEN*``, ``*KEY*``, ``*SECRET*``,
``*PASSWORD*``) with ``[redacted]``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

_SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
_MIN_SECRET_LENGTH = 6
REDACTED = "[redacted]"


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """The values of secret-looking variables, longest first."""
    env = os.environ if env is None else env
    values = {v for k, v in env.items() if _SECRET_NAME.search(k) and v and len(v) >= _MIN_SECRET_LENGTH}
    return sorted(values, key=len, reverse=True)


def redact(value: Any, secrets: list[str] | None = None) -> Any:
    """``value`` with every secret replaced, recursively through dicts and lists."""
    secrets = secret_values() if secrets is None else secrets
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {redact(k, secrets): redact(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, secrets) for v in value]
    return value


# Secrets a person may paste into a message: what no environment variable of this process holds.
_SECRET_PATTERNS = tuple(
    re.compile(pattern)
    for pattern in (
        r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}",  # an Authorization header's value
        r"\b(?:sk|rk|pk)-(?:proj-|live-|test-)?[A-Za-z0-9_-]{16,}",  # OpenAI, Stripe-style keys
        r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}",  # GitHub tokens
        r"\bAKIA[0-9A-Z]{16}\b",  # an AWS access key id
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # a JWT
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|sig|password|pwd|api[_-]?key|secret|token)"
        r"\s*[=:]\s*[\"']?[^\s;\"',]{6,}",  # key=value in connection strings, URLs and configs
        r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)",  # user:password@ in a URL
    )
)


def scrub(value: Any, secrets: list[str] | None = None) -> Any:
    """:func:`redact`, and every secret-looking string a person may paste (a bearer token, an API
    key, a connection string's key, a password in a URL, a private key) replaced with ``[redacted]``,
    recursively. What is stored of a production conversation passes through here."""
    value = redact(value, secrets)
    if isinstance(value, str):
        for pattern in _SECRET_PATTERNS:
            value = pattern.sub(REDACTED, value)
        return value
    if isinstance(value, dict):
        return {k: scrub(v, []) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v, []) for v in value]
    return value
