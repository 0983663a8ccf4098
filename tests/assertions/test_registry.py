"""registry: which assertions of a test are kit checks, and their configs checked by the checks' own parsers."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_evals.assertions import registry
from agent_evals.assertions._config import ConfigError
from agent_evals.assertions.registry import check_module, check_name, kit_checks, parse_check_config
from agent_evals.suites.check_ref import CheckRef
from agent_evals.assertions.tool_sequence import ToolSequenceConfig

from ._assertion_support import metadata

ROOT = Path(__file__).resolve().parents[2]


def test_every_assertion_file_is_a_kit_check_and_back() -> None:
    files = {path.stem for path in (ROOT / "assertions").glob("*.py") if not path.stem.startswith("_")}
    assert set(registry.kit_check_names()) == files
    assert len(registry.kit_check_names()) == len(set(registry.kit_check_names()))
    assert set(registry.pack_checks()["spoke"]) == {"input_diff", "spoke_json_valid", "pull_request"}
    assert registry.pack_of("input_diff") == "spoke" and registry.pack_of("tool_sequence") is None


def test_core_checks_live_in_the_core_and_pack_checks_in_their_pack() -> None:
    for name in registry.CORE_CHECKS:
        assert check_module(name).__name__ == f"agent_evals.assertions.{name}"
    for pack, checks in registry.pack_checks().items():
        for name in checks:
            assert check_module(name).__name__.startswith(f"agent_evals.packs.{pack}."), name


def test_check_modules_are_the_module_of_every_kit_check_once() -> None:
    """What the warm server imports for the workers' grading: each check's module, none twice."""
    modules = registry.check_modules()
    assert len(modules) == len(set(modules))
    assert set(modules) == {check_module(name).__name__ for name in registry.kit_check_names()}


@pytest.mark.parametrize("name", registry.kit_check_names())
def test_a_suite_assertion_is_recognised(name: str) -> None:
    assert check_name({"type": "python", "value": f"file://../../assertions/{name}.py"}) == name
    assert check_name({"type": "python", "value": f"file://../../../assertions/{name}.py"}) == name
    assert check_name({"type": "python", "value": f"file://../../assertions/{name}.py:get_assert"}) == name
    assert check_name({"type": "python", "value": f"assertions/{name}.py"}) == name


@pytest.mark.parametrize(
    "assertion",
    [
        {"type": "javascript", "value": "file://../../assertions/tool_sequence.py"},
        {"type": "llm-rubric", "value": "The agent was polite"},
        {"type": "python", "value": "file://../../assertions/my_check.py"},  # not one of the kit's
        {"type": "python", "value": "file://../../myassertions/tool_sequence.py"},  # not the assertions folder
        {"type": "python", "value": "file://../../assertions/tool_sequence.pyc"},
        {"type": "python", "value": "file://../../assertions/tool_sequence.py.bak"},
        {"type": "python", "value": "output == 'assertions/tool_sequence'"},  # inline code
        {"type": "python"},
        {"value": "file://../../assertions/tool_sequence.py"},
    ],
    ids=[
        "javascript",
        "llm-rubric",
        "unknown file",
        "other folder",
        "pyc",
        "backup file",
        "inline code",
        "no value",
        "no type",
    ],
)
def test_other_assertions_are_not_kit_checks(assertion: dict) -> None:
    assert check_name(assertion) is None


def test_kit_checks_keep_config_metric_and_position() -> None:
    asserts = [
        {"type": "contains", "value": "pull request"},
        {
            "type": "python",
            "value": "file://../../assertions/input_diff.py",
            "metric": "diff",
            "config": {"source": "billing", "expected_changes": {}},
        },
        "not an assertion",
        {"type": "python", "value": "file://../../assertions/pull_request.py"},
        {"type": "python", "value": "file://checks/custom.py", "config": {"x": 1}},
    ]
    assert kit_checks(asserts) == [
        CheckRef("input_diff", {"source": "billing", "expected_changes": {}}, "diff", 1),
        CheckRef("pull_request", None, None, 3),
    ]
    assert kit_checks([]) == []
    assert kit_checks(None) == []
    assert kit_checks({"type": "python", "value": "file://../../assertions/pull_request.py"}) == []


def test_parse_check_config_returns_the_parsed_config() -> None:
    parsed = parse_check_config("tool_sequence", {"expected": ["get_spoke"], "mode": "strict"})
    assert parsed == ToolSequenceConfig(expected=("get_spoke",), mode="strict")
    assert check_module("input_diff").__name__ == "agent_evals.packs.spoke.checks.input_diff"


@pytest.mark.parametrize(
    ("name", "config", "message"),
    [
        ("tool_sequence", {"mod": "strict"}, "unknown config key 'mod'; allowed keys: expected, mode, ignore"),
        ("tool_sequence", {"expected": ["a"], "mode": "loose"}, 'config.mode is "loose", which is not allowed'),
        ("tool_not_executed", {}, "config.tools is missing: give a list of tool names or globs"),
        ("argument_match", {"tool": "x"}, "config.args is missing: give an object of expected arguments"),
        ("input_diff", {"source": 3, "expected_changes": {}}, "config.source must be a spoke name or an object"),
        ("spoke_json_valid", {"check_pull_request": "yes"}, "config.check_pull_request must be true or false"),
        ("pull_request", {"expect": "maybe"}, 'config.expect is "maybe", which is not allowed'),
        ("function_call_metrics", {"expected_calls": [], "threshold": 2}, "config.threshold must be a number"),
        ("conversation", {"allowed_ends": ["finished"]}, "config.allowed_ends has list"),
    ],
)
def test_a_bad_config_raises_the_checks_own_config_error(name: str, config: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_check_config(name, config)
    assert message in str(err.value)
    # the very message grading gives for the same config
    assert check_module(name).grade(config, metadata())["reason"] == f"{name}: invalid config: {err.value}"


def test_an_unknown_check_name() -> None:
    with pytest.raises(KeyError, match="unknown kit check 'tool_ordering': not a core check, nor a check of a built-in pack; known: tool_sequence, "):
        parse_check_config("tool_ordering", {})
