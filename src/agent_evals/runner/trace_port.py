"""Promptfoo's trace receiver and its port (``tracing.otlp.http.port`` of a suite's config).

A fixed port (4318 by default) is shared by every process on the machine: when another one
holds it (another eval with tracing, a collector), Promptfoo runs on without traces and every
``trajectory:*`` assertion fails as if the agent had called no tool. So:

- A suite whose port reads the environment (``port: "{{ env.AGENT_EVALS_OTLP_PORT | default(4318) }}"``,
  as the kit's own suites write it) gets a free port of its own from the runner for each run
  (:func:`receiver_env`: the port for Promptfoo's receiver, the endpoint for the provider's
  spans). Suites side by side, or runs at once, never meet; plain ``npx promptfoo eval`` uses
  the default.
- A suite with a fixed port is checked first (:func:`busy_trace_port`): the runner stops it with
  one line rather than let it run blind, and never runs two suites with the same port at once.
"""

from __future__ import annotations

import errno
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agent_evals.provider.tracing import ENDPOINT_ENV  # where the provider sends its spans

DEFAULT_PORT = 4318
PORT_ENV = "AGENT_EVALS_OTLP_PORT"  # the receiver's port, when the config reads it (`{{ env.AGENT_EVALS_OTLP_PORT }}`)
_FROM_ENV = re.compile(r"\{\{\s*env\." + PORT_ENV + r"\b")


@dataclass(frozen=True)
class Receiver:
    """A suite's trace receiver: its host, and its fixed port or None (the runner chooses one)."""

    host: str
    port: int | None

    @property
    def fixed(self) -> tuple[str, int] | None:
        """What two suites must not share at once: a fixed host and port (None: a port of its own)."""
        return (self.host, self.port) if self.port is not None else None


def trace_receiver(config: Path) -> Receiver | None:
    """The receiver the suite's config enables, or None when it has none."""
    try:
        data: Any = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return None  # the preflight names a broken config
    tracing = data.get("tracing") if isinstance(data, dict) else None
    http = ((tracing or {}).get("otlp") or {}).get("http") if isinstance(tracing, dict) else None
    if not (isinstance(tracing, dict) and tracing.get("enabled") and isinstance(http, dict) and http.get("enabled")):
        return None
    host = str(http.get("host") or "127.0.0.1")
    port = http.get("port")
    if isinstance(port, str) and _FROM_ENV.search(port):
        return Receiver(host, None)
    return Receiver(host, int(port or DEFAULT_PORT))


def receiver_env(receiver: Receiver | None) -> dict[str, str]:
    """For a suite whose receiver's port reads the environment: a free port for it, and the endpoint
    the provider sends its spans to. Nothing for a suite without a receiver or with a fixed port."""
    if receiver is None or receiver.port is not None:
        return {}
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((receiver.host, 0))  # the system's choice: free now, and Promptfoo takes it right after
        port = sock.getsockname()[1]
    return {PORT_ENV: str(port), ENDPOINT_ENV: f"http://{receiver.host}:{port}/v1/traces"}


def busy_trace_port(config: Path) -> str | None:
    """Why the suite's trace receiver cannot start (its fixed port is taken), or None."""
    receiver = trace_receiver(config)
    if receiver is None or receiver.fixed is None:
        return None
    host, port = receiver.fixed
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Node listens: closed connections don't count
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                return None
            return (
                f"port {port} of Promptfoo's trace receiver ({host}) is in use by another process (another eval "
                "with tracing?): without it every trajectory assertion would fail; run the suites with tracing "
                f"one at a time, or let the runner choose a port: port: \"{{{{ env.{PORT_ENV} | default({port}) }}}}\""
            )
    return None
