"""docs/agent.md snippets work as documented; the loop benchmark runs."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml

from agent_evals.live.chat_api import ChatResponse
from agent_evals.agent.config import load_agent_config
from agent_evals.agent.mcp_servers import HttpServer
from agent_evals.agent.factory import load_factory
from agent_evals.agent.types import ConversationalAgent

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "agent.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, re.DOTALL)


def test_the_documented_agent_yaml_is_valid(tmp_path: Path) -> None:
    (agent_yaml,) = [b for b in blocks("yaml") if "max_tool_rounds" in b]
    (tmp_path / "doc").mkdir()
    (tmp_path / "doc" / "agent.yaml").write_text(agent_yaml)
    (tmp_path / "doc" / "instructions.md").write_text("Help.")
    config = load_agent_config("doc", config_dir=tmp_path)
    assert config.tools == ("list_spokes", "get_spoke") and config.max_tool_rounds == 12
    (portal,) = config.servers
    assert isinstance(portal, HttpServer) and portal.url == "${PORTAL_URL}/mcp/"
    assert yaml.safe_load(agent_yaml)["servers"]["portal"]["headers"] == {"Authorization": "Bearer ${PORTAL_TOKEN:-}"}


def test_the_documented_custom_factory_works(monkeypatch: pytest.MonkeyPatch) -> None:
    (example,) = [b for b in blocks("python") if "class EchoAgent" in b]
    module = types.ModuleType("docs_agent_example")
    exec(compile(example, "docs/agent.md", "exec"), module.__dict__)  # noqa: S102 - running the snippet is the test
    monkeypatch.setitem(sys.modules, "docs_agent_example", module)
    factory = load_factory("docs_agent_example:create_agent")
    # called the way the providers call it
    agent = factory(
        "my-agent",
        instructions_file=None,
        model=None,
        temperature=None,
        max_tool_rounds=None,
        chat_model=None,
        headers={"X-Test-Id": "t"},
    )
    assert isinstance(agent, ConversationalAgent)

    async def turn() -> str:
        async with agent:
            return (await agent.respond([{"role": "user", "content": "hi"}])).text

    assert asyncio.run(turn()) == "echo: hi" and agent.info.name == "my-agent"


def test_the_documented_chat_answer_has_the_response_shape() -> None:
    (answer,) = [b for b in blocks("json") if "conversation_id" in b]
    parsed = ChatResponse.model_validate(json.loads(answer.replace("…", "")))
    assert parsed.tool_calls[0]["name"] == "get_spoke" and parsed.tool_calls[0]["outcome"] == "ok"


def test_benchmark_runs() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "agent_loop_overhead.py"),
            "--turns",
            "5",
            "--warmup",
            "1",
            "--chat",
            "2",
            "--target-ms",
            "1000",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^loop overhead per model round +10 +\d+\.\d\d ms", done.stdout, re.MULTILINE), (
        done.stdout
    )
    assert re.search(r"^chat endpoint per message minus server +2 ", done.stdout, re.MULTILINE), done.stdout
