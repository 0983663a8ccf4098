"""Promptfoo's trace receiver and its port (``tracing.otlp.http.port`` of a suite's config).

The port in a suite's config (4318, Promptfoo's default) is shared by every process on the
machine: when another one holds it (another eval with tracing, a collector), Promptfoo runs on
without traces and every ``trajectory:*`` assertion fails as if the agent had called no tool.
So under the runner a suite with a receiver gets a free port of its own for each run:
:func:`own_receiver` writes the suite's config again beside it (``.run-<eval id>.promptfooconfig.yaml``,
the same folder, so every relative ``file://`` path still holds; git ignores it) with that port,
and gives the provider the endpoint to send its spans to. Suites side by side, shards and runs
at once never meet; the copy is removed when the suite is done, or by the sweep once the process
that wrote it (named in its first line, with its start time) is gone: runs of other data dirs
share the suite folder, so a copy's owner, not a run list, says whether it is stale. Plain
``npx promptfoo eval`` uses the config as written.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agent_evals.processes import ProcessRef
from agent_evals.provider.tracing import ENDPOINT_ENV  # where the provider sends its spans

DEFAULT_PORT = 4318
COPY_GLOB = ".run-*.promptfooconfig.yaml"


@dataclass(frozen=True)
class Receiver:
    host: str
    port: int


def trace_receiver(config: Path) -> Receiver | None:
    """The receiver the suite's config enables, or None when it has none."""
    data = _load(config)
    http = _http(data)
    if http is None:
        return None
    return Receiver(str(http.get("host") or "127.0.0.1"), int(http.get("port") or DEFAULT_PORT))


@contextmanager
def own_receiver(config: Path, eval_id: str) -> Iterator[tuple[Path, dict[str, str]]]:
    """The config Promptfoo runs and what to add to its environment: for a suite with a receiver, a
    copy of its config with a free port and the provider's endpoint (the copy removed after);
    else the config itself and nothing."""
    data = _load(config)
    http = _http(data)
    if http is None:
        yield config, {}
        return
    host = str(http.get("host") or "127.0.0.1")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))  # the system's choice: free now, and Promptfoo takes it right after
        port = sock.getsockname()[1]
    http["port"] = port
    copy = config.with_name(f".run-{eval_id}.promptfooconfig.yaml")
    owner = ProcessRef.current()
    copy.write_text(f"# {config.name} with a trace receiver port of this run's own "
                    f"(agent-evals run, {owner.owner_words}); removed after the suite\n"
                    + yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    try:
        yield copy, {ENDPOINT_ENV: f"http://{host}:{port}/v1/traces"}
    finally:
        copy.unlink(missing_ok=True)


def stale_copies(evals: Path) -> list[Path]:
    """Config copies whose owner is gone (a runner killed outright leaves its copy); a copy
    without a readable owner line is stale too."""
    return [path for path in sorted(evals.glob(f"*/{COPY_GLOB}")) if not _owner_alive(path)]


def _owner_alive(copy: Path) -> bool:
    try:
        with copy.open(encoding="utf-8") as handle:
            first = handle.readline()
    except (OSError, UnicodeDecodeError):
        return False
    return first.startswith("# ") and "(agent-evals run, " in first and ProcessRef.owner_alive(first)


def _load(config: Path) -> Any:
    try:
        return yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}  # the preflight names a broken config


def _http(data: Any) -> dict[str, Any] | None:
    """The config's ``tracing.otlp.http`` when the receiver is on."""
    tracing = data.get("tracing") if isinstance(data, dict) else None
    http = ((tracing or {}).get("otlp") or {}).get("http") if isinstance(tracing, dict) else None
    if not (isinstance(tracing, dict) and tracing.get("enabled") and isinstance(http, dict) and http.get("enabled")):
        return None
    return http
