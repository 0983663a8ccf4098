"""The README shows only commands that work: every command it names exists and parses."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from agent_evals.cli import build_parser
from agent_evals.runner.suites import ALL, discover

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
    inline = re.findall(r"`((?:\.venv/bin/|agent-evals )[^`]+)`", README)
    for command in [c for c in COMMANDS[2:] if not c.startswith("npm run")] + inline:
        words = shlex.split(command.replace("<", "").replace(">", "").replace("…", ""))
        if words[0] in ("agent-evals", ".venv/bin/agent-evals"):
            build_parser().parse_known_args(words[1:])
        elif words[:3] == [".venv/bin/python", "-m", "agent_evals.golden"]:
            assert (ROOT / "src/agent_evals/golden/__main__.py").is_file()
        elif words[0] == ".venv/bin/python" and words[1].startswith("benchmarks/"):
            assert list(ROOT.glob("benchmarks/*.py"))
        else:
            pytest.fail(f"the README shows a command no test knows: {command}")


def test_links_to_docs_resolve() -> None:
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), f"README links to missing {target}"
