from pathlib import Path

import pytest

from agent_evals.agent.config import AgentConfigError, available_agents, load_agent_config


def test_both_agents_load_with_their_tools() -> None:
    assert {"spoke", "integration"} <= set(available_agents())
    spoke = load_agent_config("spoke")
    for agent in (spoke, load_agent_config("integration")):  # one server: the portal, its token optional
        (server,) = agent.servers
        assert (server.name, server.url, dict(server.headers)) == (
            "portal", "${PORTAL_URL}/mcp/", {"Authorization": "Bearer ${PORTAL_TOKEN:-}"}
        )
        assert agent.tools == server.tools
    assert "create_spoke_pull_request" in spoke.tools
    assert "complete_pull_request" not in spoke.tools
    integration = load_agent_config("integration")
    assert not {"create_spoke_pull_request", "validate_spoke_config"} & set(integration.tools)
    assert spoke.instructions_sha256 != integration.instructions_sha256


def test_overrides(tmp_path: Path) -> None:
    alt = tmp_path / "alt.md"
    alt.write_text("Be brief.")
    config = load_agent_config("spoke", instructions_file=alt, model="m2", temperature=0.9, max_tool_rounds=3)
    assert (config.instructions, config.model, config.temperature, config.max_tool_rounds) == ("Be brief.", "m2", 0.9, 3)


SERVERS = "servers: {portal: {url: 'http://p/mcp/', tools: [a]}}\n"


def _write(root: Path, text: str) -> Path:
    (root / "bad").mkdir(parents=True)
    (root / "bad" / "agent.yaml").write_text(text)
    (root / "bad" / "i.md").write_text("x")
    return root


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("description: d\nmodel: m\ninstructions: i.md\n" + SERVERS + "colour: red\n", "colour"),
        ("description: d\nmodel: m\ninstructions: i.md\nservers: {}\n", "servers"),
        ("description: d\nmodel: m\ninstructions: i.md\n", "servers: Field required"),
        ("description: d\nmodel: m\ninstructions: missing.md\n" + SERVERS, "missing.md does not exist"),
        ("description: d\nmodel: m\ninstructions: i.md\n" + SERVERS + "temperature: 5\n", "temperature"),
        ("description: [unclosed\n", "not valid YAML"),
    ],
)
def test_bad_agent_files(tmp_path: Path, yaml_text: str, message: str) -> None:
    root = _write(tmp_path, yaml_text)
    with pytest.raises(AgentConfigError, match=message):
        load_agent_config("bad", config_dir=root)


def test_the_old_top_level_tools_list_says_how_to_write_it_now(tmp_path: Path) -> None:
    root = _write(tmp_path, "description: d\nmodel: m\ninstructions: i.md\ntools: [list_spokes, get_spoke]\n")
    with pytest.raises(AgentConfigError) as caught:
        load_agent_config("bad", config_dir=root)
    message = str(caught.value)
    assert message.startswith(f"{root / 'bad' / 'agent.yaml'}: the top-level `tools:` list is no longer read")
    assert "servers: {portal: {url: \"${PORTAL_URL}/mcp/\"" in message and "\n" not in message
    assert "tools: [<the same list>]" in message and "docs/agent.md" in message


@pytest.mark.parametrize(("name", "message"), [("nope", "unknown agent 'nope'.*spoke"), ("../etc", "invalid agent name")])
def test_unknown_or_unsafe_agent_names(name: str, message: str) -> None:
    with pytest.raises(AgentConfigError, match=message):
        load_agent_config(name)


def test_override_out_of_range() -> None:
    with pytest.raises(AgentConfigError, match="temperature override"):
        load_agent_config("spoke", temperature=7)
