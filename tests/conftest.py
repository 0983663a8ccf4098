"""Fixtures shared across the test tree: a live portal and a scripted model server.

Everything runs on 127.0.0.1; no test needs a network or a real model.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.system import PortalSystem
from agent_evals.processes import KitStarter
from agent_evals.runner.warm_workers import WarmWorkers
from agent_evals.testing.conversations import AGENT_MODEL, USER_MODEL, ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer

pytest_plugins = [
    "tests.leftovers",  # a temporary directory per session, checked for leftovers at the end
    "tests.schedule",  # the longest test files go to the workers first
]

PROJECT_ROOT = Path(__file__).resolve().parents[1]

# The model endpoint and the model of each role (what a CI job's secrets and variables hold).
LLM_ENV = (
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_AD_TOKEN",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AGENT_MODEL",
    "USER_MODEL",
    "JUDGE_MODEL",
)
# Variables a developer's shell may carry that would point the kit somewhere else.
_FOREIGN_ENV = (
    *LLM_ENV,
    "PORTAL_URL",
    "PORTAL_TOKEN",
    "AGENT_EVALS_RECORD_DIR",
    "AGENT_EVALS_REPLAY_DIR",
    "AGENT_EVALS_RUN_ID",
    "LLM_TOOL_CHOICE",
    "LLM_MAX_TOKENS_AGENT",
    "LLM_MAX_TOKENS_USER",
    "LLM_MAX_TOKENS_JUDGE",
)


@pytest.fixture(scope="session")
def portal_starter() -> Iterator[KitStarter]:
    """How the portals the tests start themselves start: forked from one warm server per test process,
    as a run's portal is (0.18 s of CPU instead of 1.05 s; the launcher's contract and a warm portal's
    pid, session and crash: tests/runner/test_warm_workers.py). The cold start (``npm run portal``'s)
    stays tested by the module portal of tests/portal/ and by every plain ``promptfoo eval``."""
    with WarmWorkers(system_modules=PortalSystem.server_modules) as server:
        yield server.starter()


@pytest.fixture(scope="session")
def live_portal(
    tmp_path_factory: pytest.TempPathFactory, portal_starter: KitStarter
) -> Iterator[PortalProcess]:
    """One portal for the session, with a token, on a fresh data dir."""
    root = tmp_path_factory.mktemp("live-portal")
    with PortalProcess(data_dir=root / "data", token=PortalProcess.new_token(), log_file=root / "portal.log",
                       starter=portal_starter) as portal:
        yield portal


@pytest.fixture(scope="session")
def scripted_llm() -> Iterator[ScriptedOpenAIServer]:
    """A scripted model server; tests set ``scripted_llm.responder``."""
    with ScriptedOpenAIServer(ScriptedConversations([])) as server:
        yield server


@pytest.fixture
def kit_env(
    monkeypatch: pytest.MonkeyPatch, live_portal: PortalProcess, scripted_llm: ScriptedOpenAIServer
) -> dict[str, str]:
    """The environment a run gets: the live portal and the scripted models, nothing else."""
    for name in _FOREIGN_ENV:
        monkeypatch.delenv(name, raising=False)
    env = {
        "PORTAL_URL": live_portal.url,
        "PORTAL_TOKEN": live_portal.token or "",
        "OPENAI_BASE_URL": scripted_llm.base_url,
        "AGENT_MODEL": AGENT_MODEL,
        "USER_MODEL": USER_MODEL,
        "LLM_MAX_RETRIES": "0",
        "JUDGE_MODEL": "none",  # no judge unless a test scripts one (the judged checks are NOT GRADED)
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def use_scripted_models(monkeypatch: pytest.MonkeyPatch, base_url: str, **more: str) -> None:
    """Point the kit's model clients at a scripted server (agent and simulated user; no judge, no retry)."""
    for key, value in {"OPENAI_BASE_URL": base_url, "AGENT_MODEL": AGENT_MODEL, "USER_MODEL": USER_MODEL,
                       "JUDGE_MODEL": "none", "LLM_MAX_RETRIES": "0", **more}.items():
        monkeypatch.setenv(key, value)


def clean_env() -> dict[str, str]:
    """``os.environ`` without the variables of ``_FOREIGN_ENV`` (for subprocesses)."""
    return {k: v for k, v in os.environ.items() if k not in _FOREIGN_ENV}


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run with its own data dir and Promptfoo database; no inherited endpoints."""
    for key in list(os.environ):
        if key not in clean_env():
            monkeypatch.delenv(key)
    monkeypatch.setenv("AGENT_EVALS_DATA_DIR", str(tmp_path / "data" / "portal"))
    monkeypatch.setenv("PROMPTFOO_CONFIG_DIR", str(tmp_path / "promptfoo"))
    return tmp_path
