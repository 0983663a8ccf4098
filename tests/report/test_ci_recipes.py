"""The CI recipes run as written: the shell steps of .github/workflows/agent-evals.yml, read
from the file, run against the scripted model: each shard job of the matrix, its results handed
to the merge-and-gate job (as upload-artifact and download-artifact would), then that job; first
as on main (the gate holds, the run is kept as the baseline), then as on a pull request whose
agent now fails one smoke case (the report compares with the baseline and the gate breaks).
Azure Pipelines runs the same commands, one shard per parallel job.

The matrix has four shards; to keep the test short, main and the pull request run as one shard
each (``--shard 1/1``): the same steps, the matrix smaller (merging several shards into the
unsharded run is tested in tests/runner/test_scale_e2e.py), and the smoke selection narrowed to
one smoke case of each of two agents (``TESTED``).
The install step (``scripts/setup.sh``) is not run here: ``./test.sh`` ran it before the tests.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_evals.golden.record import build_scripts
from agent_evals.suites.discovery import discover
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from agent_evals.testing.scripted_replies import ChatRequest, Reply
from tests.conftest import LLM_ENV, PROJECT_ROOT, clean_env
from tests.report.conftest import needs_promptfoo

WORKFLOW = PROJECT_ROOT / ".github" / "workflows" / "agent-evals.yml"
AZURE = PROJECT_ROOT / "azure-pipelines.yml"
INSTALL = "install"
SECRETS = set(LLM_ENV)  # the endpoint (secrets) and the models (variables)
# The conditions the workflow uses, per event: a new one fails this test until it is listed here.
CONDITIONS = {
    "github.event_name == 'pull_request'": {"push": False, "pull_request": True},
    "always() && steps.run.outcome != 'skipped'": {"push": True, "pull_request": True},
    "always() && steps.merge.outcome == 'success'": {"push": True, "pull_request": True},
    "always() && steps.report.outcome == 'success'": {"push": True, "pull_request": True},
    "github.event_name != 'pull_request' && github.ref == 'refs/heads/main'": {
        "push": True,
        "pull_request": False,
    },
}


def _workflow() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())


SHARD_JOB, MERGE_JOB = "shard", "merge-and-gate"


def _steps(job: str) -> list[dict[str, Any]]:
    return _workflow()["jobs"][job]["steps"]


def _shell_steps(job: str, event: str) -> list[dict[str, Any]]:
    """The ``run:`` steps ``job`` runs on ``event``, in order, without the install."""
    chosen = []
    for step in _steps(job):
        condition = step.get("if")
        assert condition is None or condition in CONDITIONS, f"unknown condition {condition!r}"
        if (
            "run" in step
            and step.get("id") != INSTALL
            and (condition is None or CONDITIONS[condition][event])
        ):
            chosen.append(step)
    return chosen


def test_the_workflow_gates_pull_requests_that_touch_the_agent_or_the_suites() -> None:
    workflow = _workflow()
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as true
    assert triggers["pull_request"]["paths"] == ["agent_config/**", "evals/**"]
    shard, merge = workflow["jobs"][SHARD_JOB], workflow["jobs"][MERGE_JOB]
    steps = {step.get("id"): step for step in [*shard["steps"], *merge["steps"]]}
    assert steps[INSTALL]["run"] == "scripts/setup.sh"  # the README's setup
    assert shard["strategy"] == {"fail-fast": False, "matrix": {"shard": [1, 2, 3, 4]}}
    assert shard["env"]["SHARD"] == "${{ matrix.shard }}/${{ strategy.job-total }}"
    assert '--filter-metadata priority=smoke --repeat 3 --shard "$SHARD"' in steps["run"]["run"]
    assert steps["upload-shard"]["with"]["path"] == "${{ env.REPORT_DIR }}/results"
    assert steps["download-shards"]["with"] == {"pattern": "agent-evals-shard-*", "path": "${{ env.SHARDS_DIR }}"}
    assert merge["needs"] == SHARD_JOB and merge["if"] == "${{ !cancelled() }}"
    assert "agent-evals merge" in steps["merge"]["run"]
    assert (
        "--format markdown" in steps["report"]["run"]
        and '>> "$GITHUB_STEP_SUMMARY"' in steps["report"]["run"]
    )
    assert steps["upload-report"]["with"]["path"] == "${{ env.REPORT_DIR }}"
    assert "agent-evals gate --gate evals/gate.yaml" in steps["gate"]["run"]
    env = shard["env"]
    assert all(
        env[name] == f"${{{{ secrets.{name} }}}}"
        for name in SECRETS - {"AGENT_MODEL", "USER_MODEL", "JUDGE_MODEL"}
    )
    assert not SECRETS & set(merge["env"])  # the merge and the gate call no model


def _commands(script: str) -> list[str]:
    return [
        line.strip()
        for line in script.splitlines()
        if line.strip() and not line.strip().startswith("set -eo")
    ]


def test_azure_pipelines_runs_the_same_commands() -> None:
    azure = yaml.safe_load(AZURE.read_text())
    jobs = {job["job"]: job for job in azure["jobs"]}
    assert jobs["shard"]["strategy"] == {"parallel": len(_workflow()["jobs"][SHARD_JOB]["strategy"]["matrix"]["shard"])}
    assert jobs["merge_and_gate"]["dependsOn"] == "shard"
    for job in (SHARD_JOB, MERGE_JOB):
        steps = jobs[job.replace("-", "_")]["steps"]
        scripts = {step["name"]: step["script"] for step in steps if "script" in step}
        github = {step["id"]: step["run"] for step in _steps(job) if "run" in step}
        assert scripts.keys() == {k.replace("-", "_") for k in github}
        for name, script in github.items():
            azure_lines = _commands(scripts[name.replace("-", "_")])
            github_lines = _commands(script)
            if name == "report":  # the job summary: GitHub's file, Azure's logging command
                assert github_lines.pop() == 'cat "$REPORT_DIR/summary.md" >> "$GITHUB_STEP_SUMMARY"'
                assert azure_lines.pop() == 'echo "##vso[task.uploadsummary]$REPORT_DIR/summary.md"'
            assert azure_lines == github_lines, name
    run = next(step for step in jobs["shard"]["steps"] if step.get("name") == "run")
    assert run["env"]["SHARD"] == "$(System.JobPositionInPhase)/$(System.TotalJobsInPhase)"
    assert jobs["shard"]["variables"] == [{"group": "agent-evals"}]  # only the shards read the endpoint
    assert azure["pr"]["paths"]["include"] == ["agent_config/*", "evals/*"]
    assert {"testResultsFormat": "JUnit", "testResultsFiles": "$(REPORT_DIR)/junit.xml"}.items() <= next(
        s["inputs"] for s in jobs["merge_and_gate"]["steps"] if s.get("task") == "PublishTestResults@2"
    ).items()


JUDGE_YES = '{"pass": true, "score": 1, "reason": "as the case expects"}'
C01_FIRST_MESSAGE = "Hi! We need a dev network for our CRM app"  # evals/spoke-create/golden/plan.yaml


class BreakC01:
    """The golden conversations of every suite, except that C01's agent never reports its PR."""

    def __init__(self, scripts: ScriptedConversations) -> None:
        self.scripts = scripts
        self.broken = False

    def __call__(self, request: ChatRequest) -> Reply:
        reply = self.scripts(request)
        content = (reply.message or {}).get("content") or ""
        if self.broken and _first_user(request).startswith(C01_FIRST_MESSAGE) and "/pullrequest/" in content:
            return Reply.text(re.sub(r"https?://\S+", "(link withheld)", content))
        return reply


def _first_user(request: ChatRequest) -> str:
    return next((str(m.get("content")) for m in request.messages if m.get("role") == "user"), "")


@pytest.fixture(scope="module")
def models() -> Iterator[tuple[ScriptedOpenAIServer, BreakC01]]:
    # the CI has a judge: a gate cannot decide on a run whose deciding (judged) checks were not graded
    scripts = [s for suite in discover() for s in build_scripts(suite)]
    responder = BreakC01(ScriptedConversations(scripts, judge=lambda request: Reply.text(JUDGE_YES)))
    with ScriptedOpenAIServer(responder) as server:
        yield server, responder


def _env(job: str, tmp: Path, shared: Path, server: ScriptedOpenAIServer) -> dict[str, str]:
    env = clean_env()
    for name, value in _workflow()["jobs"][job]["env"].items():
        if "${{" not in str(value):
            env[name] = str(value)
        else:
            assert name in SECRETS | {"PROMPTFOO_CONFIG_DIR", "REPORT_DIR", "BASELINE_DIR", "SHARD", "SHARDS_DIR"}, name
    env.update(
        PROMPTFOO_CONFIG_DIR=str(tmp / "promptfoo"),
        REPORT_DIR=str(tmp / "report"),
        BASELINE_DIR=str(shared / "baseline"),
        GITHUB_STEP_SUMMARY=str(tmp / "step-summary.md"),
        AGENT_EVALS_DATA_DIR=str(tmp / "data" / "portal"),
    )
    if job == SHARD_JOB:
        env.update(OPENAI_BASE_URL=server.base_url, AGENT_MODEL="agent-model", USER_MODEL="user-model",
                   JUDGE_MODEL="judge-model", LLM_MAX_RETRIES="0")
    return env


# The shard step runs as written, its selection narrowed to one smoke case of each of two agents' suites
# (C01 the one the pull request breaks) and C03, which is not smoke and must stay out: 2 cases instead
# of 20, three runs each as in CI (a baseline needs three to be reliable); the other suites select no
# case and are skipped. Every step, the merge of two agents' suites, the baseline and the gate's
# verdicts are the same; the smoke cases left out replay in tests/runner/test_replay_all.py. Two runs
# of 20 cases here cost 105 s of CPU; of one case of each of the three agents, 30 s; of two, 20 s.
SMOKE_FILTER = "--filter-metadata priority=smoke "
TESTED = ["C01", "I01"]


def _script(step: dict[str, Any]) -> str:
    script = str(step["run"])
    if step.get("id") != "run":
        return script
    assert script.count(SMOKE_FILTER) == 1, script
    return script.replace(SMOKE_FILTER, f"{SMOKE_FILTER}--filter-pattern '^({'|'.join([*TESTED, 'C03'])}) ' ")


def _run_job(job: str, event: str, env: Mapping[str, str]) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every shell step of ``job`` as GitHub runs it (bash -eo pipefail), stopping after the first failure."""
    done = {}
    for step in _shell_steps(job, event):
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _script(step)],
            cwd=PROJECT_ROOT,
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=900,
        )
        done[step["id"]] = result
        if result.returncode != 0:
            break
    return done


def _run_workflow(
    event: str, tmp: Path, shared: Path, server: ScriptedOpenAIServer, shards: int
) -> dict[str, subprocess.CompletedProcess[str]]:
    """The shard jobs (each on its own "machine": folders, database, data dir), their results handed
    over as the artifacts would be, then the merge-and-gate job (whose steps it answers)."""
    handed = tmp / "shards"
    for index in range(1, shards + 1):
        machine = tmp / f"shard-{index}"
        env = {**_env(SHARD_JOB, machine, shared, server), "SHARD": f"{index}/{shards}"}
        ran = _run_job(SHARD_JOB, event, env)
        assert [(k, r.returncode) for k, r in ran.items()] == [("run", 0)], ran["run"].stdout[-3000:]
        shutil.copytree(machine / "report" / "results", handed / f"agent-evals-shard-{index}")
    return _run_job(MERGE_JOB, event, {**_env(MERGE_JOB, tmp / "merge", shared, server), "SHARDS_DIR": str(handed)})


def _report_json(tmp: Path) -> dict[str, Any]:
    return json.loads((tmp / "merge" / "report" / "report.json").read_text())


@needs_promptfoo
def test_the_workflow_on_main_then_on_a_pull_request(
    tmp_path: Path, models: tuple[ScriptedOpenAIServer, BreakC01]
) -> None:
    server, responder = models
    main, pull = tmp_path / "main", tmp_path / "pr"

    on_main = _run_workflow("push", main, tmp_path, server, shards=1)
    assert list(on_main) == ["merge", "report", "gate", "keep-baseline"], {
        k: v.returncode for k, v in on_main.items()
    }
    assert all(r.returncode == 0 for r in on_main.values()), on_main["gate"].stdout + on_main["gate"].stderr
    assert on_main["gate"].stdout.splitlines()[-1].startswith("gate holds")
    report = _report_json(main)
    smoke = len(TESTED)  # C03 is not smoke: the workflow's --filter-metadata left it out
    assert report["complete"] and report["totals"]["cases"] == smoke and report["totals"]["runs"] == 3 * smoke
    assert sorted(c["id"] for c in report["cases"]) == sorted(TESTED)
    assert {c["priority"] for c in report["cases"]} == {"smoke"} and all(c["k"] == 3 for c in report["cases"])
    blessed = json.loads((tmp_path / "baseline" / "baseline.json").read_text())  # agent-evals baseline bless
    assert blessed["blessed"]["runs_per_case"] == 3 and blessed["blessed"]["agents"] == ["integration", "spoke"]
    assert blessed["cases"] == report["cases"]
    assert "no baseline stored from main yet" in on_main["report"].stdout

    responder.broken = True
    on_pr = _run_workflow("pull_request", pull, tmp_path, server, shards=1)
    assert [(k, r.returncode) for k, r in on_pr.items()] == [("merge", 0), ("report", 0), ("gate", 1)]
    merged = on_pr["merge"].stdout
    assert "merge: spoke-create: shard(s) 1 of 1" in merged and "missing" not in merged
    gate = on_pr["gate"].stdout
    assert (
        "BROKEN no_regressions (priority smoke): 1 regression(s) against the baseline: C01 pass→fail" in gate
    )
    # 3 runs a side: C01's 3/3 → 0/3 is named, but not significant across the family (p 0.05)
    assert "not significant: C01 pass→fail 3/3 → 0/3 p=0.05 (likely regression)" in gate
    assert (
        "BROKEN min_pass_hat_k priority smoke" in gate
        and gate.splitlines()[-1] == "gate broken: 2 of 6 rule(s)"
    )
    summary = (pull / "merge" / "step-summary.md").read_text()
    assert summary.startswith("## ❌ Agent evals") and "- **Regressions** (1): `C01` pass → fail" in summary
    assert _report_json(pull)["baseline"]["counts"]["regression"] == 1
    junit = ET.parse(pull / "merge" / "report" / "junit.xml").getroot()
    assert junit.get("tests") == str(smoke) and junit.get("failures") == "1"
    assert sorted(p.name for p in (pull / "merge" / "report" / "results").iterdir()) == [
        "integration-qa.json",
        "spoke-create.json",
    ]  # the suites the selection left no case of ran nothing
    assert os.environ.get("GITHUB_STEP_SUMMARY") != str(pull / "merge" / "step-summary.md")
