"""The agent's completion cap: agent.yaml's max_tokens, LLM_MAX_TOKENS_AGENT, the factory's argument."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_evals.agent.config import AgentConfigError, load_agent_config
from agent_evals.agent.factory import create_agent
from agent_evals.llm import LLMConfigError
from agent_evals.llm.caps import CappedChatModel

YAML = "description: d\nmodel: m\ninstructions: i.md\nservers: {portal: {url: 'http://127.0.0.1:1/mcp/', tools: [list_spokes]}}\n"


def agents(root: Path, extra: str = "") -> Path:
    (root / "capped").mkdir(parents=True)
    (root / "capped" / "agent.yaml").write_text(YAML + extra)
    (root / "capped" / "i.md").write_text("Be brief.")
    return root


def cap_of(root: Path, **kwargs: object) -> int:
    agent = create_agent("capped", config_dir=root, **kwargs)  # type: ignore[arg-type]
    assert isinstance(agent.model, CappedChatModel)
    return agent.model.max_tokens


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AZURE_OPENAI_ENDPOINT", "AGENT_MODEL", "LLM_MAX_TOKENS_AGENT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")


def test_agent_yaml_may_set_a_cap(tmp_path: Path) -> None:
    assert load_agent_config("capped", config_dir=agents(tmp_path, "max_tokens: 512\n")).max_tokens == 512
    assert load_agent_config("spoke").max_tokens is None  # the production agent uses the role's default


@pytest.mark.parametrize("value", ["0", "-3", "40000", "many"])
def test_a_bad_cap_in_agent_yaml_is_a_config_error_naming_it(tmp_path: Path, value: str) -> None:
    with pytest.raises(AgentConfigError, match="max_tokens"):
        load_agent_config("capped", config_dir=agents(tmp_path, f"max_tokens: {value}\n"))


def test_the_cap_order(tmp_path: Path, endpoint: None, monkeypatch: pytest.MonkeyPatch) -> None:
    plain, yaml_cap = agents(tmp_path / "a"), agents(tmp_path / "b", "max_tokens: 512\n")
    assert cap_of(plain) == 2048  # the agent role's default
    assert cap_of(yaml_cap) == 512  # agent.yaml
    monkeypatch.setenv("LLM_MAX_TOKENS_AGENT", "256")
    assert cap_of(yaml_cap) == 256  # the environment over agent.yaml
    assert cap_of(yaml_cap, max_tokens=64) == 64  # the provider's max_tokens over everything


def test_a_bad_factory_argument_is_a_config_error(tmp_path: Path, endpoint: None) -> None:
    with pytest.raises(LLMConfigError, match="max_tokens must be a whole number of tokens from 1 to 32768, got 0"):
        cap_of(agents(tmp_path), max_tokens=0)
