"""Every snippet of docs/provider.md: YAML configs parse, the custom simulator runs."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import yaml

from agent_evals.conversation.users import BaseUserSimulator, Turn, UserMessage
from agent_evals.provider.config import parse_config
from agent_evals.provider.run import _load_simulator

DOC = Path(__file__).resolve().parents[2] / "docs" / "provider.md"
FIXED = {"user_messages": ["hi"]}


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.DOTALL)


def test_every_yaml_snippet_is_a_valid_provider_config_or_test() -> None:
    snippets = [yaml.safe_load(block) for block in _blocks("yaml")]
    assert len(snippets) == 3
    for snippet in snippets:
        for provider in snippet.get("providers", []):
            assert provider["id"] == "file://../../providers/agent.py"
            parse_config(provider["config"], FIXED, env={})
        for test in snippet.get("tests", []):
            parse_config({}, test["vars"], env={})
        if "vars" in snippet:
            config = parse_config({}, snippet["vars"], env={})
            assert config.simulated_user is not None
            _load_simulator(config.simulated_user.class_ or "")(params=config.simulated_user.params)
    assert snippets[0]["defaultTest"]["options"] == {"disableVarExpansion": True}


def test_the_custom_simulator_example_runs() -> None:
    [source] = _blocks("python")
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102 - the documented example itself
    user = namespace["AsksTwice"](params={"request": "copy crm-dev-neu"})
    assert isinstance(user, BaseUserSimulator)
    link = "Done: http://127.0.0.1:8400/repos/spokes/pullrequest/3"
    assert asyncio.run(user.next([])) == UserMessage(text="copy crm-dev-neu")
    assert asyncio.run(user.next([Turn("copy", "Which name?")])) == UserMessage(text="copy crm-dev-neu")
    assert asyncio.run(user.next([Turn("copy", "Which name?"), Turn("copy", "No.")])) == UserMessage(end="gave_up")
    assert asyncio.run(user.next([Turn("copy", link)])) == UserMessage(end="done")
