"""The scheduled CI recipes run as written: the shell steps of .github/workflows/agent-evals-live.yml, read from
the file, run against a portal whose store holds yesterday's conversations (planted through its chat with the
scripted model); first with the project's thresholds (too few conversations to judge: exit 0), then in a
checkout whose thresholds the sample crosses (exit 1: the alert). Azure Pipelines runs the same commands.
The install step (``scripts/setup.sh``) is not run here: ``./test.sh`` ran it before the tests."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer

from ..conftest import PROJECT_ROOT, clean_env
from ..project_copy import copy_project
from .conftest import ChatPortal
from .planted import PLANTED, SCRIPTS, plant

WORKFLOW = PROJECT_ROOT / ".github" / "workflows" / "agent-evals-live.yml"
AZURE = PROJECT_ROOT / "azure-pipelines-live.yml"
SECRETS = {"PORTAL_TOKEN", "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"}
VARIABLES = {"PORTAL_URL", "JUDGE_MODEL"}


def _workflow() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())


def _steps() -> list[dict[str, Any]]:
    return _workflow()["jobs"]["live"]["steps"]


def test_the_workflow_runs_every_day_with_the_portal_s_token_as_a_secret() -> None:
    workflow = _workflow()
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as true
    assert triggers["schedule"] == [{"cron": "30 5 * * *"}] and "workflow_dispatch" in triggers
    job = workflow["jobs"]["live"]
    assert [step.get("id") for step in job["steps"] if "id" in step] == ["install", "live", "summary", "upload-report"]
    assert {n for n, v in job["env"].items() if "secrets." in str(v)} == SECRETS
    assert {n for n, v in job["env"].items() if "vars." in str(v)} == VARIABLES
    live = next(s for s in job["steps"] if s.get("id") == "live")["run"]
    assert "agent-evals live --window yesterday" in live and "--report-output" in live


def test_azure_pipelines_runs_the_same_commands_on_a_schedule() -> None:
    azure = yaml.safe_load(AZURE.read_text())
    assert azure["trigger"] == "none" and azure["pr"] == "none"
    (schedule,) = azure["schedules"]
    assert schedule["cron"] == _workflow()[True]["schedule"][0]["cron"] and schedule["always"] is True
    (job,) = azure["jobs"]
    scripts = {step["name"]: step for step in job["steps"] if "script" in step}
    github = {step["id"]: step["run"] for step in _steps() if "run" in step}
    assert scripts.keys() == github.keys()
    assert scripts["live"]["script"] == github["live"]  # the same command, as written
    assert set(scripts["live"]["env"]) == {"PORTAL_TOKEN", "AZURE_OPENAI_API_KEY", "OPENAI_API_KEY"}  # secrets, mapped
    assert {"group": "agent-evals-live"} in azure["variables"]


@pytest.fixture(scope="module")
def yesterday(tmp_path_factory: pytest.TempPathFactory, scripted_llm: ScriptedOpenAIServer) -> Iterator[ChatPortal]:
    """A portal whose store holds the planted conversations, as if they had been held yesterday."""
    root = tmp_path_factory.mktemp("ci-portal")
    store = root / "conversations.sqlite3"
    portal = ChatPortal(root, f"sqlite:///{store}", scripted_llm).start()
    scripted_llm.responder = ScriptedConversations(SCRIPTS)
    plant(portal)
    with sqlite3.connect(store) as db:
        db.execute("UPDATE conversations SET created_at = created_at - 86400, updated_at = updated_at - 86400")
    yield portal
    portal.stop()


def _run_steps(portal: ChatPortal, tmp: Path, home: Path | None = None) -> dict[str, subprocess.CompletedProcess[str]]:
    """The live job's shell steps as GitHub runs them (bash -eo pipefail), the summary step whatever came before."""
    env = clean_env()
    for name, value in _workflow()["jobs"]["live"]["env"].items():
        if "${{" not in str(value):
            env[name] = str(value)
    env.update(PORTAL_URL=portal.url, PORTAL_TOKEN=portal.token, JUDGE_MODEL="", PROMPTFOO_CONFIG_DIR=str(tmp / "pf"),
               REPORT_DIR=str(tmp / "report"), GITHUB_STEP_SUMMARY=str(tmp / "step-summary.md"))
    if home is not None:
        env["AGENT_EVALS_HOME"] = str(home)
    done = {}
    for step in _steps():
        if "run" in step and step["id"] != "install":
            done[step["id"]] = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                                              cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=600)
    return done


def test_the_scheduled_job_scores_yesterday_s_conversations(yesterday: ChatPortal, tmp_path: Path) -> None:
    ran = _run_steps(yesterday, tmp_path)
    assert ran["live"].returncode == 0, ran["live"].stdout + ran["live"].stderr
    assert "the pass rates and failure shares are not judged" in ran["live"].stdout  # 5 < min_graded: 20
    rows = json.loads((tmp_path / "report" / "live.json").read_text())["results"]["results"]
    assert len(rows) == len(PLANTED)
    summary = (tmp_path / "step-summary.md").read_text()
    assert summary.startswith("## Live evaluation") and "| spoke |" in summary and "| integration |" in summary


def test_a_crossed_threshold_fails_the_job(yesterday: ChatPortal, tmp_path: Path) -> None:
    home = copy_project(tmp_path / "checkout", suites=())  # the policy, agent configs and checks; no suite
    (home / "evals" / "live-thresholds.yaml").write_text("min_graded: 3\nmin_pass_rate: 0.85\n")
    ran = _run_steps(yesterday, tmp_path, home)
    assert ran["live"].returncode == 1
    assert "live: ALERT: the live pass rate 60% is below 85%" in ran["live"].stdout
    assert ran["summary"].returncode == 0 and "## Live evaluation" in (tmp_path / "step-summary.md").read_text()
