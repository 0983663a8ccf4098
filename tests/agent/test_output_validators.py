"""The output-schema validators the kit compiles ahead of a session (agent_evals.agent.mcp_sdk) are
the SDK's own, and a session that finds one compiled uses it instead of compiling again."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from mcp.client.session import ClientSession

from agent_evals.agent import mcp_sdk
from agent_evals.packs.spoke.portal.tool_catalog import catalog

TOOLS = [(tool["name"], tool["output_schema"]) for tool in catalog() if tool.get("output_schema")]


@pytest.fixture(autouse=True)
def no_validators(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp_sdk, "_VALIDATORS", {})


def _sdk_validator(name: str, schema: dict[str, Any]) -> Any:
    return ClientSession._output_schema_validator(SimpleNamespace(_tool_output_validators={}), name, schema)  # type: ignore[arg-type]


def test_each_portal_tool_has_an_output_schema_and_ours_is_the_sdks_validator() -> None:
    assert len(TOOLS) == len(catalog()) == 10
    for name, schema in TOOLS:
        ours, theirs = mcp_sdk.output_validator(schema), _sdk_validator(name, schema)
        assert type(ours) is type(theirs) and ours.schema == theirs.schema, name
        assert ours.format_checker == theirs.format_checker
        assert ours.is_valid({}) == theirs.is_valid({}) and ours.is_valid(7) == theirs.is_valid(7) is False


def test_an_invalid_schema_is_left_to_the_sdk() -> None:
    with pytest.raises(RuntimeError, match="Invalid output schema"):
        mcp_sdk.output_validator({"type": "no-such-type"})
    assert mcp_sdk.precompile_output_validators([("broken", {"type": "no-such-type"}), ("none", None)]) == 0


def test_a_session_uses_the_validators_compiled_before_it() -> None:
    assert mcp_sdk.precompile_output_validators(TOOLS) == len(TOOLS)
    assert mcp_sdk.precompile_output_validators(TOOLS) == 0  # once per process

    def compile_one(name: str, schema: dict[str, Any]) -> Any:
        raise AssertionError(f"compiled {name} again")

    session = SimpleNamespace(_tool_output_schemas=dict(TOOLS), _tool_output_validators={},
                              _output_schema_validator=compile_one)
    mcp_sdk.share_output_validators(SimpleNamespace(session=session))
    assert sorted(session._tool_output_validators) == sorted(name for name, _ in TOOLS)
    # a schema it has not seen (another server, or a tool that changed) is compiled by the SDK's session
    compiled: list[str] = []

    def sdk_compiles(name: str, schema: dict[str, Any]) -> Any:
        compiled.append(name)
        return _sdk_validator(name, schema)

    session = SimpleNamespace(_tool_output_schemas={"other": {"type": "object"}}, _tool_output_validators={},
                              _output_schema_validator=sdk_compiles)
    mcp_sdk.share_output_validators(SimpleNamespace(session=session))
    assert compiled == ["other"]
