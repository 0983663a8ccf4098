"""Beyond one machine, within a budget, end to end through real ``promptfoo eval``:

- two shards of spoke-create replayed one after another, merged: the unsharded run's verdicts,
  counts and named metrics, and one eval in the viewer's database (the release pack's shards, run
  as ``npm run eval`` prints them: tests/runner/test_hints.py);
- a shard killed mid-run (runner and portal, SIGKILL), then ``agent-evals merge``: the merged eval
  is incomplete and the merge's sweep leaves no PR active;
- a live run whose budget covers about half the cases: never past it by more than one call per
  worker, the rest ``budget`` errors, the gate broken as incomplete;
- ``-j 8`` with ``LLM_MAX_IN_FLIGHT=2``: never more than two requests at the model;
- the kit through a stand-in gateway with a key per role: its cost per key is the report's per
  role, and a key's spent budget is a ``budget`` error.

Subsets of the suite (``--filter-pattern``) keep each run to a few seconds.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_evals.golden.record import build_scripts
from agent_evals.processes import KitStarter
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.serving import read_serving
from agent_evals.processes import pid_alive
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.report.command import gate_command, load_report
from agent_evals.report.format_json import report_to_json
from agent_evals.suites.manifest import load_manifests, runs_dir
from agent_evals.runner.run import run
from agent_evals.suites.discovery import select
from agent_evals.runner.merge_command import merge_command
from agent_evals.testing.conversations import ScriptedConversations, is_preflight_ping
from agent_evals.testing.gateway import GatewayKey, StandInGateway
from agent_evals.testing.scripted_openai import ChatRequest, Reply, ScriptedOpenAIServer, fixed_latency
from agent_evals.llm.pricing import ModelPrice, PriceTable
from tests.conftest import PROJECT_ROOT, clean_env, use_scripted_models

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)

SPOKE_CREATE = select("spoke-create")[0]
CALL_USD = 0.001  # each scripted call costs this much below: 1,000 prompt tokens at $1 per 1M
PRICES = json.dumps({"agent-model": [1.0, 0.0], "user-model": [1.0, 0.0]})


class FixedCost:
    """The golden conversations, every reply reporting 1,000 prompt tokens (the pings none)."""

    def __init__(self, latency_s: float = 0.0) -> None:
        scripts = ScriptedConversations(build_scripts(SPOKE_CREATE))
        self.inner = fixed_latency(scripts, latency_s) if latency_s else scripts

    def __call__(self, request: ChatRequest) -> Reply:
        tokens = 0 if is_preflight_ping(request) else 1000
        return dataclasses.replace(
            self.inner(request), usage={"prompt_tokens": tokens, "completion_tokens": 0, "total_tokens": tokens}
        )


def _live(monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    use_scripted_models(monkeypatch, base_url, LLM_PRICES=PRICES)


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(FixedCost()) as server:
        _live(monkeypatch, server.base_url)
        yield server


def _figures(report: dict[str, Any]) -> dict[str, Any]:
    """Per case (verdict and counts), per metric: what sharding must not change."""
    cases = {c["id"]: (c["verdict"], c["runs"], c["passed"], c["failed"], c["errors"]) for c in report["cases"]}
    metrics = {m["name"]: (m["mean"], m["pass_rate"], m["rows"]) for m in report["metrics"]}
    return {"cases": cases, "metrics": metrics, "errors": report["errors_by_kind"]}


def _named_scores(path: Path) -> dict[str, float]:
    return json.loads(path.read_text())["results"]["prompts"][0]["metrics"]["namedScores"]


def _evals(config_dir: Path) -> list[str]:
    with sqlite3.connect(config_dir / "promptfoo.db") as con:
        return [row[0] for row in con.execute("SELECT id FROM evals")]


def test_shards_replayed_and_merged_are_the_unsharded_run(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # three cases over two shards (one shard gets two, each case two runs): the merge interleaves shards
    # and runs alike; more cases or shards would only add conversations or Promptfoo starts (3.5 s of CPU each)
    subset = ["--filter-pattern", "^C0[1-3] ", "--repeat", "2", "--no-cache"]
    results = isolated / "results"
    for index in range(1, 3):
        assert run("spoke-create", "golden", None, [*subset, "-o", f"{results}/{{suite}}.json"], shard=f"{index}/2") == 0
    files = sorted(results.glob("spoke-create.shard-*-of-2.json"))
    assert [f.name for f in files] == [f"spoke-create.shard-{i}-of-2.json" for i in range(1, 3)]
    assert not (isolated / "promptfoo" / "promptfoo.db").exists()  # shards keep their evals to themselves
    capsys.readouterr()
    assert merge_command(files) == 0
    merged_line = capsys.readouterr().out.splitlines()[0]
    assert merged_line.startswith("merge: spoke-create: shard(s) 1, 2 of 2, 6 row(s)")

    (merged_id,) = _evals(isolated / "promptfoo")  # one eval in the viewer's database
    merged = report_to_json(load_report([merged_id]))
    monkeypatch.setenv("PROMPTFOO_CONFIG_DIR", str(isolated / "unsharded"))
    assert run("spoke-create", "golden", None, [*subset, "-o", f"{isolated}/whole.json"]) == 0
    whole = report_to_json(load_report([str(isolated / "whole.json")]))

    assert _figures(merged) == _figures(whole)
    assert merged["complete"] and merged["totals"]["runs"] == 6
    assert _named_scores(results / "spoke-create.json") == _named_scores(isolated / "whole.json")
    rows = json.loads((results / "spoke-create.json").read_text())["results"]["results"]
    assert [(r["testIdx"], r["testCase"]["metadata"]["id"]) for r in rows] == [
        (2 * n + r, f"C0{n + 1}") for n in range(3) for r in range(2)
    ]
    data_dirs = {s.data_dir for m in load_manifests(runs_dir()) for s in m.suites if s.shard}
    assert {Path(d).name for d in data_dirs} == {f"portal.shard-{i}-of-2" for i in range(1, 3)}


class HoldAfterPullRequest:
    """The golden conversations; while ``hold`` is set, once a PR was created the agent's next reply
    waits (the shard is killed meanwhile) and ``created`` is set."""

    def __init__(self) -> None:
        self.inner = FixedCost()
        self.hold = True
        self.created = threading.Event()

    def __call__(self, request: ChatRequest) -> Reply:
        reply = self.inner(request)
        last = request.messages[-1] if request.messages else {}
        if self.hold and last.get("role") == "tool" and "pullrequest" in str(last.get("content")):
            self.created.set()
            return reply.with_delay(60)
        return reply


def test_a_shard_killed_mid_run_then_merged_is_incomplete_and_swept(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], portal_starter: KitStarter
) -> None:
    responder = HoldAfterPullRequest()
    data_dir = isolated / "data" / "portal.shard-2-of-2"
    subset = ["--filter-pattern", "^C0[1-4] ", "-o", f"{isolated}/results/{{suite}}.json", "--no-cache", "-j", "1"]
    stale = isolated / "results" / "spoke-create.shard-2-of-2.json"  # an earlier run's: never merged as this one
    stale.parent.mkdir()
    stale.write_text("{}")
    with ScriptedOpenAIServer(responder) as server:
        _live(monkeypatch, server.base_url)
        with (isolated / "shard-2.log").open("w") as log:
            shard_2 = subprocess.Popen(
                [sys.executable, "-m", "agent_evals.cli", "run", "spoke-create", "--shard", "2/2", *subset],
                cwd=PROJECT_ROOT, env={**clean_env(), **_env_of()}, stdout=log, stderr=subprocess.STDOUT,
            )
        try:
            assert responder.created.wait(90), (isolated / "shard-2.log").read_text()[-2000:]
            serving = read_serving(data_dir)
            assert serving is not None
            os.kill(serving.pid, signal.SIGKILL)  # the portal first: it would abandon the PRs itself
            shard_2.kill()
            shard_2.wait(30)
        finally:
            if shard_2.poll() is None:
                shard_2.kill()
        _wait_gone(serving.pid)
        assert not stale.exists()
        assert len(_active_prs(data_dir, portal_starter)) == 1  # the killed shard's PR, left active
        responder.hold = False
        assert run("spoke-create", None, None, subset, shard="1/2") == 0
    capsys.readouterr()
    assert merge_command([isolated / "results" / "spoke-create.shard-1-of-2.json"]) == 1
    out = capsys.readouterr().out
    assert "merge: spoke-create: shard(s) 2/2 missing: 2 case(s) did not run (C02, C04)" in out
    assert f"merge: swept 1 pull request(s) left active in {data_dir.resolve()} by 1 run(s) that died" in out
    assert _active_prs(data_dir, portal_starter) == []
    report = report_to_json(load_report([str(isolated / "results" / "spoke-create.json")]))
    assert not report["complete"]
    assert "suite spoke-create: shard(s) 2/2 missing (no results of them were merged or read)" in report["incomplete"]


def _env_of() -> dict[str, str]:
    names = ("OPENAI_BASE_URL", "AGENT_MODEL", "USER_MODEL", "JUDGE_MODEL", "LLM_MAX_RETRIES", "LLM_PRICES",
             "AGENT_EVALS_DATA_DIR", "PROMPTFOO_CONFIG_DIR")
    return {name: os.environ[name] for name in names}


def _wait_gone(pid: int) -> None:
    for _ in range(100):
        if not pid_alive(pid):
            return
        time.sleep(0.05)


def _active_prs(data_dir: Path, starter: KitStarter) -> list[dict[str, Any]]:
    with PortalProcess(data_dir=data_dir, starter=starter) as portal:
        return PortalAPI(portal.url).list_pull_requests(status="active")


def test_a_budget_for_about_half_the_cases(isolated: Path, scripted: ScriptedOpenAIServer) -> None:
    budget, workers = 0.03, 2  # the eight conversations make about 64 calls: $0.064
    code = run("spoke-create", None, None, ["--filter-pattern", "^C0[1-8] ", "-j", str(workers), "--no-cache"],
               budget_usd=str(budget))
    assert code == 100
    (manifest,) = load_manifests(runs_dir())
    spent = manifest.budget["spent_usd"]
    assert budget <= spent <= budget + workers * CALL_USD + 1e-9  # past it by one call per worker at most
    assert manifest.budget["largest_call_usd"] == CALL_USD
    report = report_to_json(load_report([manifest.run_id]))
    outcomes = [(c["passed"], c["errors"], c["error_kinds"]) for c in report["cases"]]
    assert all(o in ((1, 0, {}), (0, 1, {"budget": 1})) for o in outcomes), outcomes
    stopped = report["budget"]["stopped_cases"]
    assert 1 <= len(stopped) < 8 and report["totals"]["passed"] == 8 - len(stopped)
    (ledger,) = report["budget"]["ledgers"]
    assert ledger["scope"] == "run" and ledger["spent_usd"] == spent
    assert ledger["cost_by_role"]["agent"] + ledger["cost_by_role"]["user"] == pytest.approx(spent)
    assert gate_command([manifest.run_id]) == 1  # incomplete: the budget's error rows break the gate


def test_a_budget_is_refused_up_front(isolated: Path, scripted: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    assert run("spoke-create", None, None, ["--filter-pattern", "^C01 "], budget_usd="0") == 2
    assert run("spoke-create", None, None, ["--filter-pattern", "^C01 "], budget_usd="-1") == 2
    monkeypatch.delenv("LLM_PRICES")
    assert run("spoke-create", None, None, ["--filter-pattern", "^C01 "], budget_usd="1") == 2
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == [
        "--budget-usd 0: a budget is a number of US dollars above 0 (e.g. 5 or 0.50)",
        "--budget-usd -1: a budget is a number of US dollars above 0 (e.g. 5 or 0.50)",
    ]
    assert "the agent model agent-model has no known price, so a budget cannot be enforced" in capsys.readouterr().out
    assert scripted.request_count == 0  # refused before any model call


def test_eight_workers_never_have_more_than_two_requests_at_the_model(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedOpenAIServer(FixedCost(latency_s=0.05)) as server:
        _live(monkeypatch, server.base_url)
        monkeypatch.setenv("LLM_MAX_IN_FLIGHT", "2")
        monkeypatch.setenv("LLM_IN_FLIGHT_DIR", str(isolated / "in-flight"))
        assert run("spoke-create", None, None, ["--filter-pattern", "^C0[1-8] ", "-j", "8", "--no-cache"]) == 0
        assert server.request_count > 40
        assert server.max_in_flight == 2


def test_the_kit_through_a_gateway_with_a_key_per_role(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prices = PriceTable({"agent-model": ModelPrice(1.0, 0.0), "user-model": ModelPrice(1.0, 0.0)})
    keys = {"sk-agent": GatewayKey("agent"), "sk-user": GatewayKey("user", max_budget_usd=0.008)}
    with ScriptedOpenAIServer(FixedCost()) as upstream, StandInGateway(upstream.base_url, keys, prices) as gateway:
        _live(monkeypatch, gateway.base_url)
        monkeypatch.setenv("LLM_API_KEY_AGENT", "sk-agent")
        monkeypatch.setenv("LLM_API_KEY_USER", "sk-user")
        assert run("spoke-create", None, None, ["--filter-pattern", "^C0[1-5] ", "-j", "1", "--no-cache"]) == 100
        sent = {r.headers.get("authorization", "") for r in upstream.requests}
        assert not any(key in header for header in sent for key in keys)  # virtual keys stop at the gateway
    (manifest,) = load_manifests(runs_dir())
    report = report_to_json(load_report([manifest.run_id]))
    assert keys["sk-agent"].spend_usd == pytest.approx(report["usage"]["agent"]["cost"])
    assert keys["sk-user"].spend_usd == pytest.approx(report["usage"]["user"]["cost"]) == pytest.approx(0.008)
    assert keys["sk-user"].refused >= 1
    stopped = [c for c in report["cases"] if c["errors"]]
    assert stopped and all(c["error_kinds"] == {"budget": 1} for c in stopped)
    assert "the gateway refused: its budget for this key is spent" in stopped[0]["first_error"]
    assert report["totals"]["passed"] >= 1
