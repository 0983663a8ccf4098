"""End to end through the runner and real ``promptfoo eval``: a live run whose scripted model
fails every second conversation of C01 (``--repeat 4``) makes C01 flaky with pass^k 0 and
breaks the gate (a replay of every suite holds it: tests/runner/test_replay_all.py)."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_evals.golden.record import build_scripts
from agent_evals.report import build_report, check_gate, load_gate, load_results
from agent_evals.runner.run import run
from agent_evals.suites.discovery import select
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from agent_evals.testing.scripted_replies import ChatRequest, Reply
from tests.conftest import PROJECT_ROOT
from tests.report.conftest import needs_promptfoo
from tests.report.test_ci_recipes import C01_FIRST_MESSAGE, _first_user

pytestmark = needs_promptfoo
GATE = PROJECT_ROOT / "evals" / "gate.yaml"


class EverySecondC01Fails:
    """C01's golden conversation, but every second one to finish withholds the PR link."""

    def __init__(self, scripts: ScriptedConversations) -> None:
        self.scripts = scripts
        self.finished = 0
        self.lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Reply:
        reply = self.scripts(request)
        content = (reply.message or {}).get("content") or ""
        if _first_user(request).startswith(C01_FIRST_MESSAGE) and "/pullrequest/" in content:
            with self.lock:
                self.finished += 1
                broken = self.finished % 2 == 0
            if broken:
                return Reply.text(re.sub(r"https?://\S+", "(link withheld)", content))
        return reply


@pytest.fixture
def flaky_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[EverySecondC01Fails]:
    responder = EverySecondC01Fails(ScriptedConversations(build_scripts(select("spoke-create")[0])))
    with ScriptedOpenAIServer(responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("AGENT_MODEL", "agent-model")
        monkeypatch.setenv("USER_MODEL", "user-model")
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        monkeypatch.setenv("JUDGE_MODEL", "none")  # the golden plans play no judge
        yield responder


def test_a_flaky_case_breaks_the_gate(isolated: Path, flaky_model: EverySecondC01Fails) -> None:
    out = isolated / "results.json"
    code = run(
        "spoke-create", None, None, ["--filter-pattern", "C01", "--repeat", "4", "-o", str(out), "--no-cache"]
    )
    assert code == 100 and flaky_model.finished == 4

    for specs in ([str(out)], ["latest"]):  # the -o file, and the database
        loaded = load_results(specs)
        report = build_report(loaded.evals, loaded.runs, loaded.rows)
        (c01,) = report.cases
        assert (c01.id, c01.runs, c01.passed, c01.failed, c01.errors) == ("C01", 4, 2, 2, 0)
        assert (c01.flaky, c01.pass_hat_k, c01.k, c01.verdict) == (True, 0.0, 4, "flaky")
        assert c01.first_failure is not None and c01.first_failure.startswith("pull_request: no URL of a PR")
        assert report.complete

    verdict = check_gate(load_gate(GATE), report)
    assert not verdict.holds
    assert [rule.name for rule in verdict.broken] == ["max_flaky", "min_pass_hat_k priority smoke"]
