"""runner/system_handoff.py: which suites Promptfoo starts beside their system, and the pipe's end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_evals.runner.system_handoff import SystemHandoff, reads_system_at_start
from agent_evals.suites.discovery import Suite, select
from tests.conftest import PROJECT_ROOT
from tests.leftovers import processes_with
from tests.project_copy import copy_project

from .terminal import RUN_MARK, eval_descriptions, left_in_temp, runner_env

HOOK = PROJECT_ROOT / "hooks" / "kit.js"


def _suite(tmp_path: Path, extensions: object) -> Suite:
    folder = tmp_path / "evals" / "a-suite"
    folder.mkdir(parents=True)
    config = {"prompts": ["{{x}}"], "providers": ["echo"], "tests": [{"vars": {"x": "a"}}]}
    if extensions is not None:
        config["extensions"] = extensions
    (folder / "promptfooconfig.yaml").write_text(json.dumps(config), encoding="utf-8")
    return Suite("a-suite", folder)


def test_every_suite_of_the_project_reads_its_system_from_the_runner() -> None:
    """Each names ``file://../../hooks/kit.js:beforeAll``, relative to its folder."""
    assert all(reads_system_at_start(suite) for suite in select("all"))


@pytest.mark.parametrize(
    ("extensions", "reads"),
    [
        ([f"file://{HOOK}:beforeAll"], True),  # absolute
        ([f"file://{HOOK}:afterEach", f"file://{HOOK}:beforeAll"], True),
        ([f"file://{HOOK}:afterEach"], False),  # the hooks but beforeAll: nobody would read the pipe
        (["file://../../hooks/kit.js:beforeAll"], False),  # relative to this suite's folder: no such file
        (["file://hook.js:beforeAll"], False),  # a hook of the suite's own
        (None, False),
        ("file://x.js:beforeAll", False),  # not a list: Promptfoo says what is wrong with it
    ],
)
def test_only_a_suite_with_the_kits_before_all_reads_the_pipe(tmp_path: Path, extensions: object,
                                                              reads: bool) -> None:
    assert reads_system_at_start(_suite(tmp_path, extensions)) is reads


def test_a_suite_whose_config_cannot_be_read_is_started_after_its_system(tmp_path: Path) -> None:
    suite = _suite(tmp_path, None)
    suite.config.write_text("prompts: [", encoding="utf-8")
    assert reads_system_at_start(suite) is False


def test_the_handoff_writes_once_and_closes_and_survives_a_reader_that_is_gone() -> None:
    handoff = SystemHandoff()
    read = os.dup(handoff.pass_fds[0])
    handoff.spawned()
    handoff.give({"PORTAL_URL": "u"}, ["PORTAL_URL", "PORTAL_TOKEN"])
    handoff.refuse("too late")  # one message only
    with os.fdopen(read, "rb") as pipe:
        assert json.loads(pipe.read()) == {"env": {"PORTAL_URL": "u"}, "unset": ["PORTAL_TOKEN"]}
    gone = SystemHandoff()
    gone.spawned()  # Promptfoo's copy of the read end was the only other one: it exited
    gone.refuse("the portal did not start")  # no BrokenPipeError: Promptfoo's exit status says what happened
    assert gone.sent


needs_promptfoo = pytest.mark.skipif(not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(),
                                     reason="npm packages not installed")


def _run(home: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    env = {**runner_env(tmp_path, "http://127.0.0.1:9/v1"), "AGENT_EVALS_HOME": str(home)}
    command = [sys.executable, "-m", "agent_evals.cli", "run", "spoke-create", "--replay", "--no-check",
               "--filter-pattern", "^C01 ", "-j", "1"]
    done = subprocess.run(command, env=env, cwd=home, capture_output=True, text=True, timeout=300)
    return done, env


@needs_promptfoo
def test_a_portal_that_fails_after_promptfoo_started_ends_the_run_with_its_one_line(tmp_path: Path) -> None:
    """Promptfoo, started beside the portal, is refused the system: the run says the portal's one line
    (exit 2), as when Promptfoo started after it; Promptfoo's error stays in its log, its empty eval is
    deleted, nothing is left running or in the temporary directory."""
    home = copy_project(tmp_path, ("spoke-create",))
    (tmp_path / "data" / "portal" / "not-a-portal").mkdir(parents=True)  # the portal refuses this data dir
    done, env = _run(home, tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output[-3000:]
    assert "run: [system] the portal for spoke-create did not start: " in done.stdout, output[-3000:]
    assert "Results are in the Promptfoo viewer" not in output  # there is nothing to view
    for noise in ("Extension hook", "Traceback", "    at "):  # Promptfoo's error and its Node stack trace
        assert noise not in output, output[-3000:]
    [log] = (tmp_path / "data" / "runs").glob("*/promptfoo-spoke-create.log")  # kept: the run was not clean
    assert "agent-evals: the suite's system did not start: the portal for spoke-create" in log.read_text()
    assert eval_descriptions(tmp_path / "promptfoo") == []
    assert processes_with(RUN_MARK, env[RUN_MARK]) == []
    assert left_in_temp(env) == []


@needs_promptfoo
def test_a_suite_without_the_kits_before_all_gets_its_system_before_promptfoo_starts(tmp_path: Path) -> None:
    """Nothing would read the pipe: the runner starts Promptfoo after the portal, with the portal's
    URL and token in its environment (the row passes only if the workers got them)."""
    home = copy_project(tmp_path, ("spoke-create",))
    config = home / "evals" / "spoke-create" / "promptfooconfig.yaml"
    config.write_text(config.read_text().replace("  - file://../../hooks/kit.js:beforeAll\n", "", 1))
    assert not reads_system_at_start(Suite("spoke-create", config.parent))
    done, env = _run(home, tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "1 passed" in done.stdout, done.stdout[-3000:]
    assert processes_with(RUN_MARK, env[RUN_MARK]) == []
