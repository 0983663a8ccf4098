"""The release pack cleans up after itself, end to end and as users run it: ``agent-evals run
release-notes`` and plain ``npx promptfoo eval``, with the real MCP servers (``mcp-server-git``, the
filesystem server) over stdio on real working copies; only the model is scripted (the golden plans,
bent where a test needs a failure).

After PASS, FAIL and ERROR rows (a model reply that is not JSON, a git server killed mid-conversation),
after Ctrl-C typed in a real terminal, after plain Promptfoo on the golden cassettes, and after a
``kill -9`` of the whole run followed by ``agent-evals cleanup``: no working copy or run folder left
under ``data/release``, no server process left, nothing in the temporary directory.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from agent_evals.golden.record import build_scripts
from agent_evals.suites.discovery import select
from agent_evals.testing.conversations import ConversationScript, ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from agent_evals.testing.scripted_replies import ChatRequest, Reply
from agent_evals.packs.release.git_command import git
from tests.conftest import PROJECT_ROOT
from tests.leftovers import processes_naming, processes_with
from tests.runner.terminal import RUN_MARK, Terminal, kill_outright, left_in_temp, runner_env

RUN = [sys.executable, "-m", "agent_evals.cli", "run", "release-notes", "--no-check"]


def _scripts() -> dict[str, ConversationScript]:
    """The golden plans of the suite's cases, by case id."""
    suite = select("release-notes")[0]
    return {case: build_scripts(suite, only=[case])[0] for case in ("R01", "R02", "R05", "R07")}


def _release(env: dict[str, str]) -> Path:
    """Where the release system keeps its run folders in this test's data dir."""
    return Path(env["AGENT_EVALS_DATA_DIR"]).parent / "release"


def _left(env: dict[str, str]) -> list[str]:
    """Run folders, working copies and server processes left: none after a run that cleaned up."""
    release = _release(env)
    folders = sorted(str(p.relative_to(release)) for p in release.glob("*")) if release.is_dir() else []
    return folders + processes_naming(str(release)) + processes_with(RUN_MARK, env[RUN_MARK])


def _replies(request: ChatRequest) -> int:
    """How many replies the agent's model gave in this conversation so far (the step it is asked for)."""
    return sum(1 for m in request.messages if m.get("role") == "assistant")


def _spoke_words(output: str) -> list[str]:
    """What a release run must not say: the portal's words (its pull requests, its logs)."""
    return re.findall(r"portal|pull requests?|\bPRs?\b", output, re.IGNORECASE)


def _until(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class BentModels:
    """The golden plans, bent: R05 checks out main instead of its new branch (its notes land on main:
    ``protected_branches`` fails), R07's reply is not JSON (an ERROR row, kind model), R02's git server
    is killed just before it creates the branch (an ERROR row, kind system). Each conversation's first
    request notes the working copies there are at that moment, and the state of each (its branches and
    what ``git status`` shows)."""

    def __init__(self, release: Path) -> None:
        scripts = _scripts()
        scripts["R05"] = replace(scripts["R05"], agent=[_on_main(step) for step in scripts["R05"].agent])
        scripts["R07"] = replace(scripts["R07"], agent=[Reply.malformed("{not json")])
        self.cases = {script.key: case for case, script in scripts.items()}
        self.inner = ScriptedConversations(scripts.values())
        self.release = release
        self.copies_at_start: dict[str, dict[str, str]] = {}
        self.killed: list[str] = []

    def __call__(self, request: ChatRequest) -> Reply:
        case = self.cases.get(_first_user_message(request))
        if _replies(request) == 0 and case is not None:
            self.copies_at_start[case] = {p.name: _state(p) for p in self.release.glob("*/work/*")}
        if _replies(request) == 2 and case == "R02" and not self.killed:
            (copy,) = self.release.glob("*/work/*")
            self.killed = [_kill(line) for line in processes_naming(str(copy)) if "mcp-server-git" in line]
        return self.inner(request)


def _state(copy: Path) -> str:
    """A working copy's branches (with their commits) and its changes not committed."""
    return git(copy, "branch", "--format=%(refname:short) %(objectname)") + git(copy, "status", "--porcelain")


def _first_user_message(request: ChatRequest) -> str:
    return next((str(m.get("content")) for m in request.messages if m.get("role") == "user"), "")


def _on_main(step: object) -> object:
    """The step, but a checkout of the new branch checks out main instead."""
    if isinstance(step, Reply) and step.message and "git_checkout" in json.dumps(step.message.get("tool_calls")):
        return Reply.tool_calls([("git_checkout", {"repo_path": ".", "branch_name": "main"})])
    return step


def _kill(line: str) -> str:
    """SIGKILL for the process of a ``processes_naming`` line; answers once it is dead."""
    pid = int(line.split()[1].rstrip(":"))
    os.kill(pid, signal.SIGKILL)
    _until(lambda: _dead(pid), f"pid {pid} to die")
    return line


def _dead(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.fixture
def bent(tmp_path: Path) -> Iterator[tuple[BentModels, dict[str, str]]]:
    models = BentModels(tmp_path / "data" / "release")
    with ScriptedOpenAIServer(models) as server:
        yield models, runner_env(tmp_path, server.base_url)


def test_pass_fail_and_error_rows_each_leave_nothing(bent: tuple[BentModels, dict[str, str]], tmp_path: Path) -> None:
    models, env = bent
    out = tmp_path / "r.json"
    with_check = [arg for arg in RUN if arg != "--no-check"]  # the preflight's servers and repository go too
    done = subprocess.run([*with_check, "--filter-pattern", "R0[1257]", "-j", "1", "-o", str(out)], env=env,
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    printed = done.stdout
    assert done.returncode == 100, printed[-3000:] + done.stderr[-2000:]  # rows failed and errored; the run completed
    assert "Traceback" not in printed + done.stderr, done.stderr[-3000:]
    assert not _spoke_words(printed + done.stderr), printed[-3000:]
    lines = {line.split()[0]: line for line in printed.splitlines() if line.startswith("  R")}
    assert lines["R01"].split()[1] == "PASS", printed[-3000:]
    assert "FAIL" in lines["R05"] and "protected_branches: protected branch main moved" in lines["R05"]
    assert "ERROR" in lines["R07"] and "[model]" in lines["R07"]
    assert models.killed, "R02's git server was never found to kill"
    assert "[system] MCP server 'git' (mcp-server-git) stopped during the conversation" in lines["R02"]
    results = json.loads(out.read_text())["results"]["results"]
    rows = {r["testCase"]["metadata"]["id"]: r["response"]["metadata"] for r in results}
    assert {case: (m["cleanup"]["by"], m["cleanup"]["reset"]) for case, m in rows.items()} == {
        case: ("provider", "working copy") for case in ("R01", "R02", "R05", "R07")}
    # one worker: one working copy, and every conversation found it as the first did (R05 moved main,
    # R02's git server was killed mid-conversation: the reset took both back)
    starts = list(models.copies_at_start.values())
    assert len(starts) == 4 and len(starts[0]) == 1 and "--worker-" in next(iter(starts[0])), starts
    assert all(start == starts[0] for start in starts), models.copies_at_start
    assert _left(env) == []
    assert left_in_temp(env) == []


class HeldModels:
    """The golden plans; every conversation's second request (its servers up, its first tool calls
    made) is held until the test lets it go."""

    def __init__(self) -> None:
        self.inner = ScriptedConversations(_scripts().values())
        self.held = threading.Event()
        self.go = threading.Event()

    def __call__(self, request: ChatRequest) -> Reply:
        if _replies(request) == 1:
            self.held.set()
            self.go.wait(60)
        return self.inner(request)


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[HeldModels, dict[str, str]]]:
    models = HeldModels()
    with ScriptedOpenAIServer(models) as server:
        yield models, runner_env(tmp_path, server.base_url)
        models.go.set()


def test_ctrl_c_mid_conversation_leaves_nothing(held: tuple[HeldModels, dict[str, str]]) -> None:
    models, env = held
    terminal = Terminal([*RUN, "--filter-pattern", "R0[12]", "-j", "2"], env=env, cwd=PROJECT_ROOT)
    terminal.wait_for(models.held.is_set, 180, "a conversation with its servers up")
    assert processes_naming(str(_release(env))), "no server runs on a working copy: nothing to clean up"
    terminal.ctrl_c()  # the terminal's SIGINT reaches the whole foreground group
    models.go.set()
    code = terminal.wait(timeout=120)
    output = terminal.output
    assert code == 130, output[-3000:]
    assert "Ctrl-C: stopping Promptfoo, then removing this run's working copies" in output, output[-3000:]
    assert "Traceback" not in output
    assert not _spoke_words(output), output[-3000:]
    _until(lambda: _left(env) == [], "the servers to stop")  # they end with their session, in the workers' teardown
    assert left_in_temp(env) == []


def test_a_run_killed_outright_is_swept_by_agent_evals_cleanup(held: tuple[HeldModels, dict[str, str]]) -> None:
    models, env = held
    runner = subprocess.Popen([*RUN, "--filter-pattern", "R0[12]", "-j", "2"], env=env, cwd=PROJECT_ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    _until(lambda: models.held.is_set() or runner.poll() is not None, "a conversation with its servers up", 180)
    assert runner.poll() is None, "the run ended before it was killed"
    kill_outright(runner)
    models.go.set()
    release = _release(env)
    # the servers see their stdin close and stop; the run folder and temporary directory stay
    _until(lambda: processes_naming(str(release)) == [], "the servers of the killed run to stop")
    (dead,) = release.iterdir()
    assert list((dead / "work").iterdir()) and left_in_temp(env), "the killed run left nothing to sweep"

    cleanup = subprocess.run([sys.executable, "-m", "agent_evals.cli", "cleanup"], env=env, cwd=PROJECT_ROOT,
                             capture_output=True, text=True, timeout=120)
    assert cleanup.returncode == 0, cleanup.stdout + cleanup.stderr
    assert "Traceback" not in cleanup.stdout + cleanup.stderr
    assert f"{release}: removed 1 run folder(s) of runs that died" in cleanup.stdout, cleanup.stdout
    assert _left(env) == []
    assert left_in_temp(env) == []  # the dead run's temporary directory too


def test_plain_npx_promptfoo_eval_on_the_golden_cassettes_leaves_nothing(tmp_path: Path) -> None:
    env = runner_env(tmp_path, "http://127.0.0.1:9/v1")  # a replay: no model is asked
    env["AGENT_EVALS_REPLAY_DIR"] = "golden"
    out = tmp_path / "o.json"
    done = subprocess.run(["npx", "promptfoo", "eval", "-c", "evals/release-notes/promptfooconfig.yaml", "--no-cache",
                           "--filter-pattern", "R0[17]", "--no-table", "-o", str(out)], env=env, cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "agent-evals: repositories in " in done.stdout and not _spoke_words(done.stdout + done.stderr)
    rows = json.loads(out.read_text())["results"]["results"]
    assert sorted((r["testCase"]["metadata"]["id"], r["success"]) for r in rows) == [("R01", True), ("R07", True)]
    assert _left(env) == []  # afterAll removed the run folder beforeAll made
    assert left_in_temp(env) == []
