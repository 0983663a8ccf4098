"""The README shows only commands that work: every command it names exists and parses."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from agent_evals import hook_policy
from agent_evals.cli import build_parser
from agent_evals.suites.discovery import ALL, discover

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
COMMANDS = [
    line.split("#")[0].strip()
    for block in re.findall(r"```bash\n(.*?)```", README, re.S)
    for line in block.splitlines()
    if line.strip() and not line.strip().startswith(("#", "export "))
]
SCRIPTS = json.loads((ROOT / "package.json").read_text())["scripts"]
SUITES = {s.name for s in discover()} | {ALL}
SUBCOMMANDS = next(a for a in build_parser()._actions if a.dest == "command").choices


def test_the_quick_start_is_two_commands_that_exist() -> None:
    assert COMMANDS[:2] == ["./evals.sh", "./test.sh"]
    for script in ("evals.sh", "test.sh", ".ci/run", "scripts/setup.sh"):
        assert (ROOT / script).stat().st_mode & 0o111, f"{script} is not executable"
    assert (ROOT / ".ci/run").read_text().rstrip().endswith("exec ./test.sh")  # CI runs the README's command


@pytest.mark.parametrize("command", [c for c in COMMANDS if c.startswith("npm run")])
def test_npm_commands_name_real_scripts_and_parse(command: str) -> None:
    words = shlex.split(command)
    script = words[2]
    assert script in SCRIPTS, f"{command}: no npm script {script!r}"
    cli = shlex.split(SCRIPTS[script])
    if cli[0] == ".venv/bin/agent-evals":
        args = [*cli[1:], *words[4:]] if "--" in words else cli[1:]
        parsed, _ = build_parser().parse_known_args(args)
        if parsed.command == "run":
            assert parsed.suite in SUITES, f"{command}: unknown suite {parsed.suite!r}"


def test_other_commands_exist() -> None:
    """Commands outside npm, in code blocks or inline, are known to this test."""
    inline = re.findall(r"`((?:\.venv/bin/|agent-evals |npx agent-evals |npx promptfoo |scripts/)[^`]+)`", README)
    for command in [c for c in COMMANDS[2:] if not c.startswith("npm run")] + inline:
        if "<command>" in command:
            continue  # "every subcommand also runs as ..."
        command = command.replace("<suite>", "spoke-create").replace("<name>", "x").replace("…", "")
        words = shlex.split(command)
        if words[:2] == ["npx", "agent-evals"]:
            words = words[1:]  # scripts/npm-cli: the project's .venv/bin/agent-evals
        if words[0] in ("agent-evals", ".venv/bin/agent-evals") and len(words) == 2:
            assert words[1] in SUBCOMMANDS, command  # a subcommand named in the text
        elif words[0] in ("agent-evals", ".venv/bin/agent-evals"):
            parsed, _ = build_parser().parse_known_args(words[1:])
            assert parsed.command, command
        elif words[:2] == ["npx", "promptfoo"]:
            assert words[2] in ("eval", "view"), command
            if "-c" in words:
                assert (ROOT / words[words.index("-c") + 1]).is_file(), command
        elif words[:3] == [".venv/bin/python", "-m", "agent_evals.golden"]:
            assert (ROOT / "src/agent_evals/golden/__main__.py").is_file()
        elif words[:3] == [".venv/bin/python", "-m", "mypy"]:
            assert (ROOT / "tests/test_types.py").is_file()  # runs it as the README shows
        elif words == shlex.split(hook_policy.REGENERATE):
            assert (ROOT / "tests/test_hook_policy.py").is_file()  # runs it as written
        elif words[0] == ".venv/bin/python" and words[1].startswith("benchmarks/"):
            assert list(ROOT.glob("benchmarks/*.py"))
        elif words[0].startswith("scripts/"):
            assert (ROOT / words[0]).stat().st_mode & 0o111, f"{words[0]} is not executable"
        else:
            pytest.fail(f"the README shows a command no test knows: {command}")


def test_links_to_docs_resolve() -> None:
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), f"README links to missing {target}"


# --- The README's commands, run as written -------------------------------------------------------
#
# A user's first live session, in the README's own words: check, one case, the verdict, a baseline,
# the gate, the cleanup. The model is the scripted one (the golden plans of every suite), the data
# dir and the results database are the test's own; the commands are the README's, character for
# character (the test fails when one of them is no longer in the README).
JOURNEY = [
    ("npm run check -- all --offline", 0, "check: ok (102 case(s) in 6 suite(s))"),
    ("npm run check -- all", 0, "check: ok (102 case(s) in 6 suite(s))"),
    ("npm run eval -- spoke-create --filter-pattern C01", 0, "C01    PASS"),
    ("npm run report", 0, "C01"),
    ("npm run report -- latest --k 2 --format markdown", 0, "C01"),
    ("npm run report -- latest --format json -o results/baseline.json", 0, ""),
    ("npm run report -- latest --baseline results/baseline.json", 0, "baseline"),
    # a baseline of one run cannot show a significant regression: the gate says so (exit 2, cannot decide)
    ("npm run gate -- --baseline results/baseline.json", 2,
     "the baseline has fewer than 3 graded runs for 1 case(s) (C01 1): it cannot show a regression"),
    ("npm run cleanup", 0, "abandoned 0 PR(s)"),
]
BASELINE = ROOT / "results" / "baseline.json"


def test_the_journey_is_in_the_readme_word_for_word() -> None:
    for command, _, _ in JOURNEY:
        assert command in COMMANDS or f"`{command}`" in README, f"the README no longer shows {command!r}"


@pytest.mark.skipif(not (ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed")
def test_the_readme_commands_run_as_written(tmp_path: Path) -> None:
    import subprocess

    from agent_evals.golden.record import build_scripts
    from agent_evals.testing.conversations import ScriptedConversations
    from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
    from tests.conftest import clean_env

    kept = BASELINE.read_bytes() if BASELINE.is_file() else None  # a developer's own file survives the test
    scripts = ScriptedConversations([s for suite in discover() for s in build_scripts(suite)])
    try:
        with ScriptedOpenAIServer(scripts) as server:
            env = {
                **clean_env(),
                "AGENT_EVALS_DATA_DIR": str(tmp_path / "data" / "portal"),
                "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo"),
                "OPENAI_BASE_URL": server.base_url,
                "AGENT_MODEL": "agent-model",
                "USER_MODEL": "user-model",
                "JUDGE_MODEL": "none",
                "LLM_MAX_RETRIES": "0",
            }
            for command, code, shown in JOURNEY:
                done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True,
                                      timeout=300)
                said = done.stdout + done.stderr
                assert done.returncode == code, f"{command}: exit {done.returncode}\n{said[-3000:]}"
                assert shown in said, f"{command}: {shown!r} not in\n{said[-3000:]}"
                assert "Traceback" not in said and "HTTP Request:" not in said, f"{command}:\n{said[-3000:]}"
        report = json.loads(BASELINE.read_text())
        assert [case["id"] for case in report["cases"]] == ["C01"]
    finally:
        if kept is not None:
            BASELINE.write_bytes(kept)
        else:
            BASELINE.unlink(missing_ok=True)
