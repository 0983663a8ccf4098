"""Fixtures for the LLM layer tests: a scripted server and a sleep that only records."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_evals.testing.scripted_openai import ScriptedOpenAIServer, echo_responder

from .llm_fakes import RecordedSleeps


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    """A running scripted server; tests set ``server.responder``."""
    with ScriptedOpenAIServer(echo_responder) as running:
        yield running


@pytest.fixture
def sleeps() -> RecordedSleeps:
    return RecordedSleeps()
