"""Fixtures of the runner's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_evals.golden.record import build_scripts
from agent_evals.suites.discovery import select
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import HoldAfterTool, ScriptedOpenAIServer, fixed_latency


@pytest.fixture(scope="module")
def slow_models() -> Iterator[ScriptedOpenAIServer]:
    """spoke-create's golden plans played live, 0.4 s per model call: conversations stay in flight
    long enough to be interrupted, killed or watched."""
    scripts = ScriptedConversations(build_scripts(select("spoke-create")[0]))
    with ScriptedOpenAIServer(fixed_latency(scripts, 0.4)) as server:
        yield server


@pytest.fixture
def pr_open(slow_models: ScriptedOpenAIServer) -> Iterator[HoldAfterTool]:
    """The model's reply after ``create_spoke_pull_request`` is held until ``pr_open.release()``
    (or the test's end): once ``pr_open.held`` is set, a pull request is open and its row in flight,
    however busy the machine."""
    plain = slow_models.responder
    hold = HoldAfterTool(plain, "create_spoke_pull_request")
    slow_models.responder = hold
    try:
        yield hold
    finally:
        hold.release()
        slow_models.responder = plain
