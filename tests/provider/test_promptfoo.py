"""The provider through real ``npx promptfoo eval -j 2``: metadata in the results, conversations concurrent."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.runner.promptfoo_process import promptfoo_env
from agent_evals.testing.conversations import AGENT_MODEL, USER_MODEL, ScriptedConversations
from agent_evals.packs.spoke.scripts import SpokeCopy
from agent_evals.testing.scripted_openai import ChatRequest, Reply, ScriptedOpenAIServer
from tests.conftest import clean_env
from tests.spoke_prs import prs

from .conftest import check_contract

ROOT = Path(__file__).resolve().parents[2]
PROMPTFOO = ROOT / "node_modules" / ".bin" / "promptfoo"
PROVIDER = ROOT / "providers" / "agent.py"

pytestmark = pytest.mark.skipif(
    not PROMPTFOO.exists() or not shutil.which("npx"), reason="promptfoo is not installed"
)


class InFlight:
    """Wraps a responder: each reply takes ``delay`` seconds; records the most requests at once."""

    def __init__(self, responder: Any, delay: float) -> None:
        self.responder, self.delay = responder, delay
        self.now = self.most = 0
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Reply:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            time.sleep(self.delay)
            return self.responder(request)
        finally:
            with self._lock:
                self.now -= 1


def _suite(tmp_path: Path, first: SpokeCopy, second: SpokeCopy) -> Path:
    config = {
        "description": "provider e2e",
        "prompts": ["{{request}}"],
        "providers": [{"id": f"file://{PROVIDER}", "label": "spoke", "config": {"agent": "spoke", "pack": "spoke", "max_turns": 4}}],
        # else Promptfoo makes one test per string of a list in vars (user_messages)
        "defaultTest": {"options": {"disableVarExpansion": True}},
        "tests": [
            {"description": f"{first.key[1:-1]} fixed messages",
             "vars": {"request": first.request, "user_messages": first.fixed_messages()}},
            {"description": f"{second.key[1:-1]} simulated user",
             "vars": {"request": "-", "simulated_user": {"goal": f"{second.key} copy crm-dev-neu", "persona": "terse"}}},
            {"description": "X99 bad input", "vars": {"request": "-", "user_messages": ["hi"], "max_turns": 0}},
        ],
    }
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def test_promptfoo_eval_runs_conversations_concurrently(
    live_portal: PortalProcess, scripted_llm: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    first = SpokeCopy("[F01]", new_name="web2-dev-neu", address_space="10.87.0.0/22")
    second = SpokeCopy("[F02]", new_name="web3-dev-neu", address_space="10.88.0.0/22")
    inflight = InFlight(ScriptedConversations([first.script(), second.script()]), delay=0.25)
    scripted_llm.responder = inflight
    out = tmp_path / "out.json"
    env = {
        **promptfoo_env({**clean_env(), "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo")}),
        "PORTAL_URL": live_portal.url,
        "PORTAL_TOKEN": live_portal.token or "",
        "OPENAI_BASE_URL": scripted_llm.base_url,
        "AGENT_MODEL": AGENT_MODEL,
        "USER_MODEL": USER_MODEL,
        "LLM_MAX_RETRIES": "0",
        "JUDGE_MODEL": "none",
    }
    done = subprocess.run(
        ["npx", "promptfoo", "eval", "-c", str(_suite(tmp_path, first, second)), "-o", str(out), "--no-cache",
         "-j", "2"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, check=False,
    )
    assert done.returncode == 100, done.stdout[-3000:] + done.stderr[-3000:]  # 100: the bad-input row errors

    data = json.loads(out.read_text())
    rows = {row["testCase"]["description"][:3]: row for row in data["results"]["results"]}
    assert set(rows) == {"F01", "F02", "X99"}
    api = PortalAPI(live_portal.url, token=live_portal.token)
    for key, copy in (("F01", first), ("F02", second)):
        row = rows[key]
        assert row["success"] is True and not row.get("error"), row.get("error")
        metadata = row["response"]["metadata"]
        check_contract(metadata)
        assert metadata["conversation_end"] == "done" and metadata["case_id"] == key
        [pr] = prs(metadata)
        assert pr["url"] in row["response"]["output"]
        live = api.get_pull_request(pr["id"])
        assert live["spoke_name"] == copy.new_name
        assert live["eval_id"] == data["evalId"] and live["test_id"] == metadata["trace"]["test_id"]
        assert row["response"]["tokenUsage"]["numRequests"] >= 5
    assert rows["F02"]["response"]["metadata"]["usage"]["user"]["calls"] == 3
    bad = rows["X99"]
    assert bad["failureReason"] == 2 and "max_turns" in bad["error"]  # an error, not a failure
    assert data["results"]["stats"]["errors"] == 1 and data["results"]["stats"]["successes"] == 2
    assert inflight.most >= 2, "the two conversations did not overlap: are the Python workers concurrent?"
