"""Promptfoo's trace receiver listens on a fixed port (``tracing.otlp.http.port``, 4318 by default).

When another process holds that port (another eval with tracing, a collector), Promptfoo runs
on without traces and every ``trajectory:*`` assertion fails as if the agent had called no tool.
The runner asks first, and stops the suite with one line instead.
"""

from __future__ import annotations

import errno
import socket
from pathlib import Path
from typing import Any

import yaml

DEFAULT_PORT = 4318


def trace_receiver(config: Path) -> tuple[str, int] | None:
    """``(host, port)`` of the receiver the suite's config enables, or None when it has none."""
    try:
        data: Any = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return None  # the preflight names a broken config
    tracing = data.get("tracing") if isinstance(data, dict) else None
    http = ((tracing or {}).get("otlp") or {}).get("http") if isinstance(tracing, dict) else None
    if not (isinstance(tracing, dict) and tracing.get("enabled") and isinstance(http, dict) and http.get("enabled")):
        return None
    return str(http.get("host") or "127.0.0.1"), int(http.get("port") or DEFAULT_PORT)


def busy_trace_port(config: Path) -> str | None:
    """Why the suite's trace receiver cannot start (its port is taken), or None."""
    receiver = trace_receiver(config)
    if receiver is None:
        return None
    host, port = receiver
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
                "one at a time, or set tracing.otlp.http.port and the provider's otlp_endpoint to a free port"
            )
    return None
