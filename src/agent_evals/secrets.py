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
