"""Fixtures of the runner's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_evals.golden.record import build_scripts
from agent_evals.suites.discovery import select
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer, fixed_latency


@pytest.fixture(scope="module")
def slow_models() -> Iterator[ScriptedOpenAIServer]:
    """spoke-create's golden plans played live, 0.4 s per model call: conversations stay in flight
    long enough to be interrupted, killed or watched."""
    scripts = ScriptedConversations(build_scripts(select("spoke-create")[0]))
    with ScriptedOpenAIServer(fixed_latency(scripts, 0.4)) as server:
        yield server
