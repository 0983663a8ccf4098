"""``agent-evals live promote``: a stored conversation becomes a case of a suite (in a copy of the project),
its golden conversation is recorded from the conversation's model replies, the preflight accepts it and the
offline replay runs it: green for a conversation that passed, red (as in production) for one that failed."""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from agent_evals.testing.scripted_replies import Reply

from ..conftest import PROJECT_ROOT, clean_env
from ..report.conftest import needs_promptfoo
from .conftest import ChatPortal
from .planted import GOOD, INVALID_CONFIG, SCRIPTS, plant

pytestmark = needs_promptfoo
BRIEF = ('{"goal": "Get a copy of crm-dev-neu in West Europe with NSG priority high, and the pull request link.", '
         '"persona": "A developer in a hurry.", "facts": {"network to copy": "crm-dev-neu", "region": "West Europe"}}')


@pytest.fixture(scope="module")
def portal(tmp_path_factory: pytest.TempPathFactory, scripted_llm: ScriptedOpenAIServer) -> Iterator[tuple[ChatPortal, dict]]:
    root = tmp_path_factory.mktemp("promote-portal")
    running = ChatPortal(root, f"sqlite:///{root / 'c.sqlite3'}", scripted_llm).start()
    scripted_llm.responder = ScriptedConversations(SCRIPTS)
    ids = {planted.key: cid for cid, planted in plant(running, (GOOD, INVALID_CONFIG)).items()}
    yield running, ids
    running.stop()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the project's suites and agents, the code linked: promote writes here, not into the repository."""
    root = tmp_path_factory.mktemp("promote-home")
    (root / "evals").mkdir()
    shutil.copytree(PROJECT_ROOT / "evals" / "spoke-create", root / "evals" / "spoke-create")
    for name in ("live-policy.yaml", "gate.yaml"):
        shutil.copy2(PROJECT_ROOT / "evals" / name, root / "evals" / name)
    shutil.copytree(PROJECT_ROOT / "agent_config", root / "agent_config")
    for name in ("providers", "assertions", "hooks", "node_modules", "package.json"):
        (root / name).symlink_to(PROJECT_ROOT / name)
    return root


def agent_evals(home: Path, tmp: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**clean_env(), "AGENT_EVALS_HOME": str(home), "AGENT_EVALS_DATA_DIR": str(tmp / "data" / "portal"),
                   "PROMPTFOO_CONFIG_DIR": str(tmp / "promptfoo"), "JUDGE_MODEL": "none", **(env or {})}
    return subprocess.run([sys.executable, "-m", "agent_evals.cli", *args], capture_output=True, text=True, cwd=home,
                          env=environment, timeout=600, check=False)


def test_a_good_conversation_becomes_a_case_the_offline_replay_runs_green(
    portal: tuple[ChatPortal, dict], home: Path, tmp_path: Path
) -> None:
    chat, ids = portal
    env = {"PORTAL_URL": chat.url, "PORTAL_TOKEN": chat.token}
    done = agent_evals(home, tmp_path, "live", "promote", ids[GOOD.key], "--suite", "spoke-create", "--user", "messages", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "promote: P01 (fixed messages) → " in done.stdout and "P01 passes on its recorded conversation" in done.stdout
    suite = home / "evals" / "spoke-create"
    (case,) = yaml.safe_load((suite / "cases" / "from-production.yaml").read_text())
    assert case["description"].startswith("P01 from production: [good] Please copy crm-dev-neu")
    assert case["metadata"] == {"id": "P01", "group": "from-production", "priority": "full", "from_conversation": ids[GOOD.key]}
    assert case["vars"] == {"user_messages": list(GOOD.messages)}
    metrics = [a["metric"] for a in case["assert"]]
    assert metrics == ["tool_order", "spoke_json_valid", "tool_errors", "no_loops", "budgets", "grounded", "route"]
    assert "  - file://cases/from-production.yaml\n" in (suite / "promptfooconfig.yaml").read_text()
    plan = yaml.safe_load((suite / "golden" / "plan.yaml").read_text())["cases"]["P01"]
    assert [list(step)[0] for step in plan["agent"]] == ["call", "call", "say", "call", "say"]
    assert plan["agent"][-1]["say"] == r"Done. The pull request is $find(https?://[^\s/]+/repos/spokes/pullrequest/\d+)."
    assert (suite / "golden" / "P01.json").is_file()

    check = agent_evals(home, tmp_path, "check", "spoke-create", "--replay", "--offline")
    assert check.returncode == 0, check.stdout + check.stderr
    # its offline replay, green: with P02's, red, in the next test (one run of Promptfoo for both)


def test_a_failed_conversation_becomes_a_red_regression_case_with_a_drafted_brief(
    portal: tuple[ChatPortal, dict], home: Path, tmp_path: Path, scripted_llm: ScriptedOpenAIServer
) -> None:
    chat, ids = portal
    scripted_llm.responder = lambda request: Reply.text(BRIEF)  # the judge drafts the simulated user's brief
    env = {"PORTAL_URL": chat.url, "PORTAL_TOKEN": chat.token, "OPENAI_BASE_URL": scripted_llm.base_url,
           "JUDGE_MODEL": "judge-model", "LLM_MAX_RETRIES": "0"}
    done = agent_evals(home, tmp_path, "live", "promote", ids[INVALID_CONFIG.key], "--suite", "spoke-create", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "promote: P02 (simulated user)" in done.stdout
    assert "in production it failed spoke_json_valid: the case fails on replay until the agent is fixed" in done.stdout
    cases = yaml.safe_load((home / "evals" / "spoke-create" / "cases" / "from-production.yaml").read_text())
    case = cases[-1]
    assert case["vars"]["simulated_user"]["goal"].startswith("Get a copy of crm-dev-neu in West Europe")
    assert "goal" in [a["metric"] for a in case["assert"]]
    plan = yaml.safe_load((home / "evals" / "spoke-create" / "golden" / "plan.yaml").read_text())["cases"]["P02"]
    assert plan["user"] == [*INVALID_CONFIG.messages, "[DONE]"]
    # the offline replay of both promoted cases: P01 (the previous test's) green, P02 red as in production
    replay = agent_evals(home, tmp_path, "run", "spoke-create", "--replay", "--filter-pattern", r"^P0[12]\b")
    assert replay.returncode == 100, replay.stdout + replay.stderr
    lines = {line.split()[0]: line for line in replay.stdout.splitlines() if re.match(r"  P0[12] ", line)}
    assert sorted(lines) == ["P01", "P02"], replay.stdout
    assert lines["P01"].split()[1] == "PASS" and lines["P02"].split()[1] == "FAIL", replay.stdout
    assert "spoke_json_valid" in replay.stdout


def test_promote_refuses_what_cannot_be_a_case(portal: tuple[ChatPortal, dict], home: Path, tmp_path: Path) -> None:
    chat, ids = portal
    env = {"PORTAL_URL": chat.url, "PORTAL_TOKEN": chat.token}
    unknown = agent_evals(home, tmp_path, "live", "promote", "nope", "--suite", "spoke-create", env=env)
    assert unknown.returncode == 2 and "answered 404: unknown conversation 'nope'" in unknown.stdout
    other = agent_evals(home, tmp_path, "live", "promote", ids[GOOD.key], "--suite", "spoke-qa", env=env)
    assert other.returncode == 2 and "unknown suite 'spoke-qa'" in other.stdout


README_LIVE = [line.split("#")[0].strip() for line in (PROJECT_ROOT / "README.md").read_text().splitlines()
               if line.startswith("npm run live -- ")]


def test_the_readme_live_commands_run_as_written(portal: tuple[ChatPortal, dict], home: Path, tmp_path: Path) -> None:
    """The README's two commands, character for character but the conversation id, on yesterday's conversations."""
    chat, ids = portal
    assert len(README_LIVE) == 2 and README_LIVE[0].startswith("npm run live -- --window yesterday")
    store = Path(chat.store_url.removeprefix("sqlite:///"))
    with sqlite3.connect(store) as db:  # held yesterday
        db.execute("UPDATE conversations SET created_at = created_at - 86400, updated_at = updated_at - 86400")
    env = {**clean_env(), "AGENT_EVALS_HOME": str(home), "AGENT_EVALS_DATA_DIR": str(tmp_path / "data" / "portal"),
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo"), "JUDGE_MODEL": "none", "PORTAL_URL": chat.url,
           "PORTAL_TOKEN": chat.token}
    score = subprocess.run(["bash", "-c", README_LIVE[0]], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                           timeout=600)
    assert score.returncode == 0, score.stdout + score.stderr
    assert "live: 2 conversation(s) scored → " in score.stdout and "(imported as eval-" in score.stdout
    promote = README_LIVE[1].replace("Q2xJt6yNvA0kH3m9", ids[GOOD.key])
    done = subprocess.run(["bash", "-c", promote], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passes on its recorded conversation" in done.stdout
