"""Ctrl-C typed in a real terminal while cases with fixtures run: the run stops, and neither the
fixture pull requests nor the fixture spokes outlive it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_evals.golden.record import build_scripts
from agent_evals.suites.discovery import select
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer, fixed_latency
from tests.conftest import PROJECT_ROOT, clean_env

from .terminal import Terminal, fixture_spokes, pull_requests

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)


@pytest.fixture(scope="module")
def slow_models() -> Iterator[ScriptedOpenAIServer]:
    """integration-qa's golden plans played live, 1 s per model call."""
    scripts = ScriptedConversations(build_scripts(select("integration-qa")[0]))
    with ScriptedOpenAIServer(fixed_latency(scripts, 1.0)) as server:
        yield server


def test_ctrl_c_with_fixtures_in_place_removes_them(tmp_path: Path, slow_models: ScriptedOpenAIServer) -> None:
    env = clean_env()
    env.update(
        AGENT_EVALS_DATA_DIR=str(tmp_path / "data" / "portal"), PROMPTFOO_CONFIG_DIR=str(tmp_path / "promptfoo"),
        OPENAI_BASE_URL=slow_models.base_url, AGENT_MODEL="agent-model", USER_MODEL="user-model",
        LLM_MAX_RETRIES="0", PATH=f"{PROJECT_ROOT / 'node_modules' / '.bin'}{os.pathsep}{os.environ['PATH']}",
    )
    data = Path(env["AGENT_EVALS_DATA_DIR"])
    command = [sys.executable, "-m", "agent_evals.cli", "run", "integration-qa",
               "--filter-pattern", "I0[148]", "-j", "3", "--no-cache"]
    terminal = Terminal(command, env=env, cwd=PROJECT_ROOT)
    terminal.wait_for(lambda: fixture_spokes(data) and pull_requests(data), 120, "the fixtures")
    terminal.ctrl_c()
    code = terminal.wait(timeout=60)
    output = terminal.output
    assert code == 130, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    assert pull_requests(data) == [], output[-3000:]
    assert fixture_spokes(data) == [], output[-3000:]
    assert len(pull_requests(data, "abandoned")) >= 2  # the fixture pull requests, abandoned
