"""``agent-evals run … --rerun-invalid N`` through real Promptfoo with scripted models: only the
invalid rows run again, each attempt is an eval of its own in the manifest and the report, a row
that turns valid counts once as graded, one invalid on every attempt stays invalid (counted once),
and the run's exit status is the final state's. The flag's own pieces are tested without Promptfoo."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_evals.cli import main
from agent_evals.golden.record import build_scripts
from agent_evals.report import build_report, load_run
from agent_evals.suites.manifest import load_manifests, runs_dir
from agent_evals.runner.rerun_invalid import attempt_path, rerun_args, rerun_problem
from agent_evals.suites.discovery import select
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ChatRequest, Reply, ScriptedOpenAIServer
from tests.conftest import PROJECT_ROOT

SPOKE_CREATE = select("spoke-create")[0]
INVENTED = " Oh, and please put it in westus9."


def test_the_attempts_flags() -> None:
    args = ["--filter-pattern", "C0", "-n", "3", "--repeat", "3", "-j", "2", "-o", "results/{suite}.json", "x.html",
            "--description=mine", "--filter-metadata", "priority=smoke"]
    assert rerun_args(args, ["C01 copy (a)", "C02 x"], 2, 3, "spoke-create · re-run") == [
        "-j", "2", "-o", "results/{suite}.attempt-3.json", "x.attempt-3.html", "--filter-metadata", "priority=smoke",
        "--filter-pattern", r"^(?:C01 copy \(a\)|C02 x)$", "--repeat", "2", "--description", "spoke-create · re-run",
    ]
    assert attempt_path("out", 2) == "out.attempt-2"
    assert rerun_problem(11, None) == "--rerun-invalid takes a number of re-runs from 0 to 10, got 11"
    assert rerun_problem(1, "1/2") is not None and rerun_problem(0, "1/2") is None


class SpoilingUser:
    """The golden plans of spoke-create, but the simulated user invents a region in its first message:
    C01's the first time only, C02's every time."""

    def __init__(self) -> None:
        self.inner = ScriptedConversations(build_scripts(SPOKE_CREATE))
        self.first_messages: dict[str, int] = {}

    def __call__(self, request: ChatRequest) -> Reply:
        reply = self.inner(request)
        system = next((m["content"] for m in request.messages if m["role"] == "system"), "")
        opening = request.model == "user-model" and not any(m["role"] == "assistant" for m in request.messages)
        case = "C01" if "CRM application in West Europe" in system else "C02" if "IoT ingest dev network" in system else None
        if not opening or case is None or reply.message is None:
            return reply
        self.first_messages[case] = self.first_messages.get(case, 0) + 1
        if case == "C02" or self.first_messages[case] == 1:
            return Reply.text(str(reply.message["content"]) + INVENTED)
        return reply


@pytest.fixture
def spoiling(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SpoilingUser]:
    user = SpoilingUser()
    with ScriptedOpenAIServer(user) as server:
        for key, value in {"OPENAI_BASE_URL": server.base_url, "AGENT_MODEL": "agent-model", "USER_MODEL": "user-model",
                           "LLM_MAX_RETRIES": "0", "JUDGE_MODEL": "none"}.items():
            monkeypatch.setenv(key, value)
        yield user


@pytest.mark.skipif(not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed")
def test_only_invalid_rows_run_again_and_every_attempt_is_kept(
    isolated: Path, spoiling: SpoilingUser, capsys: pytest.CaptureFixture[str]
) -> None:
    out = isolated / "results" / "spoke-create.json"
    code = main(["run", "spoke-create", "--filter-pattern", "^C0[123] ", "-j", "1", "-o", str(out), "--rerun-invalid", "2"])

    assert code == 100  # C02 is still invalid after its re-runs
    assert spoiling.first_messages == {"C01": 2, "C02": 3}  # C03 was never run again
    [manifest] = load_manifests(runs_dir())
    attempts = [(s.attempt, s.selected, s.repeat) for s in manifest.suites]
    assert attempts == [(1, ["C01", "C02", "C03"], 1), (2, ["C01", "C02"], 1), (3, ["C02"], 1)]
    assert manifest.suites[1].rerun_of == manifest.suites[0].eval_id
    second = json.loads(out.with_name("spoke-create.attempt-2.json").read_text())
    assert sorted(r["testCase"]["metadata"]["id"] for r in second["results"]["results"]) == ["C01", "C02"]
    assert "re-run of invalid rows, attempt 2" in second["config"]["description"]

    report = build_report(*_parts(manifest))
    cases = {c.id: c for c in report.cases}
    assert (cases["C01"].passed, cases["C01"].invalid, cases["C01"].attempts, cases["C01"].verdict) == (1, 0, 2, "pass")
    assert (cases["C02"].runs, cases["C02"].invalid, cases["C02"].attempts, cases["C02"].verdict) == (1, 1, 3, "invalid")
    assert (cases["C03"].passed, cases["C03"].attempts) == (1, 1)
    assert report.complete  # invalid rows do not make a run incomplete; the gate may limit them
    printed = capsys.readouterr().out
    assert "report: 3 case(s), 3 run(s): 2 passed, 0 failed, 0 error(s), 1 invalid; pass^k (k=runs) 1.00" in printed
    assert "spoke-create: re-running 2 invalid row(s) (attempt 2 of at most 3): C01, C02" in printed
    assert "invalid: 1 run(s) spoiled by the simulated user, left out of pass^k; 1 re-run to a pass or fail" in printed
    assert "  C02 (invalid on all 3 attempts) turn 1, the user invented region 'westus9'" in printed
    assert "  C01 (re-run: pass on attempt 2) turn 1, the user invented region 'westus9'" in printed


def _parts(manifest: object) -> tuple:
    loaded = load_run(manifest)  # type: ignore[arg-type]
    return loaded.evals, loaded.runs, loaded.rows
