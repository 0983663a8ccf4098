"""End to end, only the model substituted: conversations planted through the portal's chat (SQLite, then a
real PostgreSQL), the portal restarted, then ``agent-evals live`` as a user runs it: exactly the planted
verdicts, in a Promptfoo eval imported into the viewer's database (read back by ``agent-evals report``),
the live report, and the alert."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_evals.report.json_rows import split_rows
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer

from ..conftest import PROJECT_ROOT, clean_env
from ..report.conftest import needs_promptfoo
from .conftest import ChatPortal
from .planted import SCRIPTS, Planted, plant
from .test_chat import SECRET

pytestmark = needs_promptfoo


@pytest.fixture(scope="module")
def planted(chat_portal: ChatPortal, scripted_llm: ScriptedOpenAIServer) -> Iterator[dict[str, Planted]]:
    scripted_llm.responder = ScriptedConversations(SCRIPTS)
    ids = plant(chat_portal)
    chat_portal.restart()  # what is scored was stored, not held in memory
    yield ids


def live(portal: ChatPortal, tmp: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**clean_env(), "PORTAL_URL": portal.url, "PORTAL_TOKEN": portal.token, "JUDGE_MODEL": "none",
                   "PROMPTFOO_CONFIG_DIR": str(tmp / "promptfoo"), "PROMPTFOO_DISABLE_TELEMETRY": "1",
                   "PROMPTFOO_DISABLE_UPDATE": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "agent_evals.cli", "live", *args], capture_output=True, text=True,
                          cwd=PROJECT_ROOT, env=environment, timeout=300, check=False)


def test_live_gives_exactly_the_planted_verdicts_in_a_promptfoo_eval(
    chat_portal: ChatPortal, planted: dict[str, Planted], tmp_path: Path
) -> None:
    thresholds = tmp_path / "thresholds.yaml"
    thresholds.write_text("min_pass_rate: 0.9\nmax_failure_share: {forbidden_tools: 0}\nmin_graded: 3\n")
    output = tmp_path / "live.json"
    done = live(chat_portal, tmp_path, "--window", "1d", "--seed", "7", "-o", str(output), "--thresholds",
                str(thresholds), "--format", "json", "--report-output", str(tmp_path / "report.json"))
    assert done.returncode == 1, done.stdout + done.stderr  # the alert
    assert "live: ALERT: the live pass rate 60% is below 90%" in done.stdout
    assert "live: ALERT: failure pattern forbidden_tools: in 20% of graded conversations, above 0%" in done.stdout

    document = json.loads(output.read_text())
    rows = document["results"]["results"]
    split = split_rows(output, lambda row: row["testCase"]["metadata"]["id"])  # the layout the report reads in blocks
    assert split is not None and split[1] == [row["testCase"]["metadata"]["id"] for row in rows]
    description = document["config"]["description"]
    assert description.startswith("LIVE · spoke, integration · ") and "5 of 5 conversation(s) (seed 7)" in description
    verdicts = {row["testCase"]["metadata"]["id"]: row for row in rows}
    assert set(verdicts) == set(planted)
    for cid, want in planted.items():
        row = verdicts[cid]
        outcome = "pass" if row["success"] else "error" if row["failureReason"] == 2 else "fail"
        failing = sorted(c["assertion"]["metric"] for c in row["gradingResult"]["componentResults"]
                         if not c["pass"] and "metric" in c["assertion"])
        assert (want.key, outcome, failing) == (want.key, want.outcome, sorted(want.failing)), row["gradingResult"]
        record = row["response"]["metadata"]
        assert record["agent_evals"] == 3 and record["user"]["kind"] == "human" and record["case_id"] == cid
        assert row["testCase"]["metadata"]["group"] == want.agent
        assert row["testCase"]["metadata"].get("rating") == want.rating
        not_graded = row["testCase"]["metadata"]["not_graded"]  # no judge: never a pass
        assert any(line.startswith("goal: no judge model is configured") for line in not_graded)
    forbidden = next(r for r in rows if r["testCase"]["metadata"]["id"] in _ids(planted, "[forbidden]"))
    reasons = [c["reason"] for c in forbidden["gradingResult"]["componentResults"]]
    assert any(r.startswith("tool_not_executed: forbidden tool called: complete_pull_request in turn 1") for r in reasons)
    invalid = next(r for r in rows if r["testCase"]["metadata"]["id"] in _ids(planted, "[invalid]"))
    assert any("'high' is not of type 'integer'" in c["reason"] for c in invalid["gradingResult"]["componentResults"])

    report = json.loads((tmp_path / "report.json").read_text())
    assert report["total"]["passed"] == 3 and report["total"]["failed"] == 2 and report["total"]["errors"] == 0
    assert report["agents"]["spoke"]["graded"] == 4 and report["agents"]["integration"]["passed"] == 1
    assert report["agreement"]["down_but_passed"] == _ids(planted, "[down]")
    assert report["agreement"]["up_pass"] == 1 and report["cost_by_role"]["agent"]["calls"] == 14

    eval_id = document["evalId"]  # the viewer's database holds it: the standard report reads it from there
    read = subprocess.run([sys.executable, "-m", "agent_evals.cli", "report", eval_id, "--format", "json"],
                          capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=120, check=False,
                          env={**clean_env(), "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo")})
    assert read.returncode == 0, read.stderr
    cases = {case["id"]: case for case in json.loads(read.stdout)["cases"]}
    assert {cid: cases[cid]["verdict"] for cid in planted} == {
        cid: ("pass" if want.outcome == "pass" else "fail") for cid, want in planted.items()
    }


def _ids(planted: dict[str, Planted], key: str) -> list[str]:
    return [cid for cid, want in planted.items() if want.key == key]


def test_the_same_seed_picks_the_same_sample_and_strata_come_first(
    chat_portal: ChatPortal, planted: dict[str, Planted], tmp_path: Path
) -> None:
    picked = []
    for attempt in range(2):
        output = tmp_path / f"{attempt}.json"
        done = live(chat_portal, tmp_path, "--window", "1d", "--count", "2", "--seed", "3", "--stratify", "down,tool_errors",
                    "-o", str(output), "--no-import")
        assert done.returncode == 0, done.stdout + done.stderr
        picked.append([r["testCase"]["metadata"]["id"] for r in json.loads(output.read_text())["results"]["results"]])
    assert picked[0] == picked[1]
    assert sorted(picked[0]) == sorted(_ids(planted, "[down]") + _ids(planted, "[forbidden]"))


def test_an_empty_window_says_so_and_writes_no_eval(chat_portal: ChatPortal, planted: dict[str, Planted], tmp_path: Path) -> None:
    done = live(chat_portal, tmp_path, "--since", "2001-01-01", "--until", "2001-01-02", "-o", str(tmp_path / "x.json"))
    assert done.returncode == 0, done.stderr
    assert "live: no conversation of spoke, integration · 2001-01-01 00:00 → 2001-01-02 00:00 UTC: nothing to score" in done.stdout
    assert not (tmp_path / "x.json").exists()


def test_a_portal_that_is_down_or_refuses_exits_2(chat_portal: ChatPortal, planted: dict[str, Planted], tmp_path: Path) -> None:
    refused = live(chat_portal, tmp_path, env={"PORTAL_TOKEN": "wrong"})
    assert refused.returncode == 2 and "answered 401" in refused.stdout
    down = live(chat_portal, tmp_path, "--portal", "http://127.0.0.1:9")
    assert down.returncode == 2 and "live: the portal at http://127.0.0.1:9 is not reachable" in down.stdout


def test_a_bad_policy_stops_before_anything_is_read(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("agents:\n  spoke:\n    pack: spoke\n    checks:\n      - check: tool_not_executed\n"
                      "        config: {tools: [merge_everything]}\n      - check: tool_erors\n"
                      "  nobody:\n    checks: [{check: tool_errors}]\n")
    done = subprocess.run([sys.executable, "-m", "agent_evals.cli", "live", "--portal", "http://127.0.0.1:9",
                           "--policy", str(policy)], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env=clean_env(), check=False)
    assert done.returncode == 2
    lines = done.stdout.splitlines()
    assert lines[0].startswith("  policy.yaml:5: agent spoke: check tool_not_executed: tool 'merge_everything' matches no portal tool")
    assert lines[1].startswith("  policy.yaml:7: agent spoke: unknown check 'tool_erors'; checks: ")
    assert lines[1].endswith("did you mean tool_errors?")
    assert lines[2].startswith("  policy.yaml:9: unknown agent 'nobody'; agents: integration, release-notes, spoke")
    assert lines[3] == "live: 3 problem(s) in the policy or thresholds; nothing was read or scored"


def test_nothing_secret_reaches_the_results(chat_portal: ChatPortal, planted: dict[str, Planted], tmp_path: Path,
                                            scripted_llm: ScriptedOpenAIServer) -> None:
    scripted_llm.responder = lambda request: __import__(
        "agent_evals.testing.scripted_replies", fromlist=["Reply"]).Reply.text("noted")
    cid = chat_portal.chat(f"[secret] my key is {SECRET}", agent="integration").json()["conversation_id"]
    output = tmp_path / "live.json"
    done = live(chat_portal, tmp_path, "--window", "1d", "--agent", "integration", "-o", str(output))
    assert done.returncode == 0, done.stdout + done.stderr
    assert cid in output.read_text() and SECRET not in output.read_text()
    database = tmp_path / "promptfoo" / "promptfoo.db"
    assert database.exists() and SECRET.encode() not in b"".join(p.read_bytes() for p in database.parent.glob("promptfoo.db*"))
