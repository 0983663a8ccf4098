"""Fixtures of the live tests: a real PostgreSQL 15 server for the session, a store of each backend,
and portals whose chat talks to the scripted model and stores in SQLite or in PostgreSQL."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from agent_evals.live.store import ConversationStore, StoreSettings

from agent_evals.live.store_holder import open_store
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.processes import COLD, KitStarter
from agent_evals.testing.postgres import PostgresServer, find_bin
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from tests.agent.conftest import script  # noqa: F401 - the same fixture: the scripted model's replies, in order

BACKENDS = ("sqlite", "postgresql")
_FOREIGN = ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN", "OPENAI_API_KEY", "JUDGE_MODEL",
            "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "APPLICATIONINSIGHTS_CONNECTION_STRING",
            "AGENT_EVALS_LIVE_DATABASE_URL")
_databases = itertools.count(1)


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the session, in a temporary folder; stopped at the end."""
    if find_bin() is None:
        pytest.fail("PostgreSQL binaries not found: install postgresql (Debian: /usr/lib/postgresql/<v>/bin) or set PG_BIN")
    server = PostgresServer(tmp_path_factory.mktemp("postgres"))
    with server:
        yield server


def new_database(postgres: PostgresServer) -> str:
    return postgres.create_database(f"live_{next(_databases)}")


def store_url(backend: str, postgres_factory: Callable[[], PostgresServer], folder: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{folder / 'conversations.sqlite3'}"
    return new_database(postgres_factory())


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ConversationStore]:
    """An empty store of each backend (the same test runs against both)."""
    url = store_url(request.param, lambda: request.getfixturevalue("postgres"), tmp_path)
    opened = open_store(StoreSettings(url, retention_days=0, instance="test-host:/data"))
    yield opened
    opened.close()


@pytest.fixture(scope="session", autouse=True)
def _chat_portals_start_warm(portal_starter: KitStarter) -> Iterator[None]:
    """Every ChatPortal of these tests starts forked from the session's warm server (tests/conftest.py)."""
    ChatPortal.starter = portal_starter
    yield
    ChatPortal.starter = COLD


class ChatPortal:
    """A portal process serving the chat, restartable on the same data dir and store."""

    starter: KitStarter = COLD  # how it starts: the tests' warm server's launcher (_chat_portals_start_warm)

    def __init__(self, root: Path, url: str, llm: ScriptedOpenAIServer, extra_env: dict[str, str] | None = None) -> None:
        self.root, self.store_url, self.llm = root, url, llm
        self.token = PortalProcess.new_token()
        self.extra_env = dict(extra_env or {})
        self.process: PortalProcess | None = None

    def start(self) -> ChatPortal:
        env = {name: "" for name in _FOREIGN}
        env.update(OPENAI_BASE_URL=self.llm.base_url, AGENT_MODEL="agent-model", LLM_MAX_RETRIES="0",
                   AGENT_EVALS_LIVE_DATABASE_URL=self.store_url, **self.extra_env)
        self.process = PortalProcess(data_dir=self.root / "data", token=self.token, log_file=self.root / "portal.log",
                                     extra_env=env, starter=self.starter).start()
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    @property
    def url(self) -> str:
        assert self.process is not None
        return self.process.url

    def client(self, user: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"}
        if user is not None:
            headers["X-User-Id"] = user
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def chat(self, message: str, conversation_id: str | None = None, *, agent: str = "spoke",
             user: str | None = "alice@contoso.com") -> httpx.Response:
        body = {"message": message} | ({"conversation_id": conversation_id} if conversation_id else {})
        with self.client(user) as http:
            return http.post(f"/api/agents/{agent}/chat", json=body)

    def stored(self, conversation_id: str) -> dict:
        with self.client() as http:
            answer = http.get(f"/api/conversations/{conversation_id}")
        assert answer.status_code == 200, answer.text
        return answer.json()


@pytest.fixture(scope="module", params=BACKENDS)
def chat_portal(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, scripted_llm: ScriptedOpenAIServer
) -> Iterator[ChatPortal]:
    """A portal of each backend for the module, on a fresh data dir and store (restartable)."""
    root = tmp_path_factory.mktemp(f"chat-{request.param}")
    url = store_url(request.param, lambda: request.getfixturevalue("postgres"), root)
    portal = ChatPortal(root, url, scripted_llm).start()
    yield portal
    portal.stop()

