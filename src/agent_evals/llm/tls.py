"""The TLS context every HTTP client of the kit uses (the model clients, MCP over HTTP): httpx's
default (the CA bundle, ``SSL_CERT_FILE``/``SSL_CERT_DIR`` honoured), built once per process.
Building it reads the CA bundle (20 to 50 ms of CPU): a client per conversation must not pay that,
and the warm server builds it before it forks, so its workers start with it
(``agent_evals.runner.warm_workers``)."""

from __future__ import annotations

import functools
import ssl

__all__ = ["ssl_context"]


@functools.cache
def ssl_context() -> ssl.SSLContext:
    import httpx2  # lazy: loads httpx2 only when used (start-up time)

    return httpx2.create_ssl_context()
