"""``agent-evals run|check`` flags: Promptfoo's own pass through; one neither knows is one line with a
did-you-mean before anything starts; a Promptfoo flag's value is never taken for the suite."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from agent_evals.cli import main
from agent_evals.runner.cli_flags import PROMPTFOO_EVAL_FLAGS
from tests.conftest import PROJECT_ROOT, clean_env

PROMPTFOO = PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo"
_OPTION = re.compile(r"^  (-\w, )?(--[\w-]+)(?:, (--[\w-]+))?(?: (<[^>]+>|\[[^\]]+\]))?")


@pytest.mark.skipif(not PROMPTFOO.exists(), reason="npm packages not installed")
def test_the_flags_are_those_of_the_installed_promptfoo_eval(tmp_path: Path) -> None:
    env = {**clean_env(), "PATH": f"{PROMPTFOO.parent}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path),
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / "pf")}
    done = subprocess.run([str(PROMPTFOO), "eval", "--help"], env=env, capture_output=True, text=True, timeout=120)
    found: dict[str, str] = {}
    for line in done.stdout.split("\nCommands:")[0].splitlines():
        if (match := _OPTION.match(line)) is None:
            continue
        short, long, alias, value = match.groups()
        takes = "none" if value is None else "optional" if value.startswith("[") else (
            "many" if value.endswith("...>") else "one")
        for flag in (short and short.rstrip(", "), long, alias):
            if flag:
                found[flag] = takes
    assert found == PROMPTFOO_EVAL_FLAGS


@pytest.fixture
def nothing_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where a run would leave its data: it must stay empty."""
    monkeypatch.setenv("AGENT_EVALS_DATA_DIR", str(tmp_path / "data" / "portal"))
    monkeypatch.setenv("PROMPTFOO_CONFIG_DIR", str(tmp_path / "pf"))
    monkeypatch.setattr("agent_evals.runner.run.run", lambda **kwargs: pytest.fail(f"the run started: {kwargs}"))
    return tmp_path


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["run", "all", "--filter-patern", "C01"],
         "agent-evals run: unknown flag --filter-patern; did you mean --filter-pattern?"),
        (["run", "spoke-create", "--repaly"], "agent-evals run: unknown flag --repaly; did you mean --replay?"),
        (["run", "spoke-create", "--no-chek"], "agent-evals run: unknown flag --no-chek; did you mean --no-check?"),
        (["check", "all", "--ofline"], "agent-evals check: unknown flag --ofline; did you mean --offline?"),
        (["run", "spoke-create", "--frobnicate"],
         "agent-evals run: unknown flag --frobnicate (see --help; other flags go to promptfoo eval)"),
        (["run", "spoke-create", "spoke-qa"],
         "agent-evals run: unexpected argument 'spoke-qa': give one suite (or all), then flags"),
        (["run", "--description", "spoke-create"],
         "agent-evals run: which suite? give one of spoke-create, spoke-qa, spoke-create-overlay, integration-qa, "
         "release-notes, spoke-create-variants, or all"),
    ],
)
def test_an_unknown_flag_is_one_line_before_anything_starts(
    nothing_starts: Path, capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    assert main(argv) == 2
    said = capsys.readouterr()
    assert said.out == "" and said.err == line + "\n"
    assert list(nothing_starts.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--replay", "spoke-create"],  # the suite, not a folder named spoke-create
        ["run", "--filter-pattern", "C01", "spoke-create", "--replay"],
        ["run", "-o", "out.json", "spoke-create", "--replay", "--filter-pattern", "C01"],
        ["run", "spoke-create", "--replay", "-j4", "--filter-pattern=C01", "--no-cache", "--repeat", "2"],
    ],
)
def test_the_suite_is_never_a_flags_value(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    seen: dict[str, object] = {}
    monkeypatch.setattr("agent_evals.runner.run.run", lambda **kwargs: seen.update(kwargs) or 0)
    assert main(argv) == 0
    assert seen["suite"] == "spoke-create" and seen["replay"] == "golden"
    if "C01" in " ".join(argv):
        assert "C01" in seen["promptfoo_args"] or "--filter-pattern=C01" in seen["promptfoo_args"]


def test_a_replay_folder_that_exists_stays_a_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spoke-create").mkdir()
    seen: dict[str, object] = {}
    monkeypatch.setattr("agent_evals.runner.run.run", lambda **kwargs: seen.update(kwargs) or 0)
    assert main(["run", "spoke-qa", "--replay", "spoke-create"]) == 0
    assert seen["suite"] == "spoke-qa" and seen["replay"] == "spoke-create"


def test_a_typo_through_npm_is_one_line(tmp_path: Path) -> None:
    env = {**clean_env(), "AGENT_EVALS_DATA_DIR": str(tmp_path / "data" / "portal"),
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / "pf")}
    done = subprocess.run(["npm", "run", "eval", "--", "all", "--filter-patern", "C01"], cwd=PROJECT_ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    said = [line for line in (done.stdout + done.stderr).splitlines() if line and not line.startswith("> ")]
    assert said == [
        "agent-evals run: unknown flag --filter-patern; did you mean --filter-pattern?"
    ]
    assert not (tmp_path / "data").exists() and not (tmp_path / "pf").exists()
