"""A 10 MB tool argument through the runner and Promptfoo: the results database and the -o file keep a
capped copy (record.caps), not four whole ones."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from agent_evals.golden.record import build_scripts
from agent_evals.runner.run import run
from agent_evals.suites.discovery import select
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from agent_evals.testing.scripted_replies import ChatRequest, Reply
from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)
HUGE = "x" * 10_000_000


def _with_a_huge_first_call(scripts: ScriptedConversations):  # noqa: ANN202
    """The agent's first move is get_spoke with a 10 MB name; then the golden conversation, as if it had not been."""

    def respond(request: ChatRequest) -> Reply:
        if request.model != "agent-model":
            return scripts(request)
        messages = request.messages
        if not any(m.get("role") == "assistant" for m in messages):
            return Reply.tool_calls([("get_spoke", {"name": HUGE})])
        first = next(i for i, m in enumerate(messages) if m.get("role") == "assistant")
        return scripts(dataclasses.replace(request, messages=[*messages[:first], *messages[first + 2:]]))

    return respond


def test_a_10_mb_argument_is_stored_capped(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scripts = ScriptedConversations(build_scripts(select("spoke-create")[0]))
    with ScriptedOpenAIServer(_with_a_huge_first_call(scripts)) as server:
        for key, value in {"OPENAI_BASE_URL": server.base_url, "AGENT_MODEL": "agent-model",
                           "USER_MODEL": "user-model", "JUDGE_MODEL": "none", "LLM_MAX_RETRIES": "0"}.items():
            monkeypatch.setenv(key, value)
        out = isolated / "r.json"
        run("spoke-create", None, None, ["--filter-pattern", "C01 ", "-o", str(out)])

    (row,) = json.loads(out.read_text())["results"]["results"]
    calls = row["response"]["metadata"]["tool_calls"]
    assert calls[0]["name"] == "get_spoke" and calls[0]["arguments"]["name"].endswith(
        "…[cut 9,983,616 of 10,000,000 characters]")
    assert [c["name"] for c in calls[1:]] == ["get_spoke", "validate_spoke_config", "create_spoke_pull_request"]
    database = sum(p.stat().st_size for p in (isolated / "promptfoo").glob("promptfoo.db*"))
    assert out.stat().st_size < 1_000_000, out.stat().st_size  # was 42 MB: four whole copies
    assert database < 5_000_000, database  # was 105 MB more
