from pathlib import Path

import pytest

from agent_evals.provider.config import ProviderConfigError, parse_config

USER = {"goal": "Get a copy of dev-weu-payments"}


def test_test_vars_win_over_the_provider_config() -> None:
    config = parse_config(
        {"agent": "spoke", "max_turns": 10, "user_messages": ["hi"], "basePath": "/suite"},
        {"simulated_user": USER, "max_turns": 4},
        env={},
    )
    assert config.max_turns == 4
    assert config.user_messages is None and config.simulated_user is not None
    assert config.simulated_user.goal == USER["goal"]


def test_environment_turns_on_record_and_replay() -> None:
    config = parse_config({"basePath": "/suite"}, {"user_messages": ["hi"]}, env={"AGENT_EVALS_REPLAY_DIR": "golden"})
    assert config.replay_dir() == Path("/suite/golden")
    config = parse_config({"basePath": "/suite"}, {"user_messages": ["hi"]}, env={"AGENT_EVALS_RECORD_DIR": "/tmp/c"})
    assert config.record_dir() == Path("/tmp/c")


def test_custom_simulator_needs_no_goal() -> None:
    config = parse_config({}, {"simulated_user": {"class": "pkg.mod:User", "params": {"a": 1}}}, env={})
    assert config.simulated_user is not None and config.simulated_user.class_ == "pkg.mod:User"


@pytest.mark.parametrize(
    ("provider", "vars_", "message"),
    [
        ({}, {}, "no user definition"),
        ({}, {"simulated_user": {"persona": "terse"}}, "needs a 'goal'"),
        ({}, {"user_messages": ["hi"], "max_turns": 0}, "max_turns"),
        ({}, {"user_messages": ["hi"], "max_turns": 500}, "max_turns"),
        ({"mode": "chat"}, {"user_messages": ["hi"]}, "mode"),
        ({"agnet": "spoke"}, {"user_messages": ["hi"]}, "agnet"),
        ({"temperature": 3}, {"user_messages": ["hi"]}, "temperature"),
        ({"simulated_user": USER, "user_messages": ["x"]}, {}, "either simulated_user or user_messages"),
        ({"record": "a", "replay": "b"}, {"user_messages": ["hi"]}, "exclusive"),
        ({}, {"simulated_user": {"goal": "g", "mood": "happy"}}, "mood"),
    ],
)
def test_bad_configuration_is_a_clear_error(provider: dict, vars_: dict, message: str) -> None:
    with pytest.raises(ProviderConfigError, match=message):
        parse_config(provider, vars_, env={})


def test_single_turn_needs_no_user() -> None:
    assert parse_config({"mode": "single_turn"}, {}, env={}).mode == "single_turn"


def test_vars_given_as_json_text_are_parsed() -> None:
    config = parse_config({}, {"user_messages": '["a", "b"]', "max_turns": "4"}, env={})
    assert config.user_messages == ["a", "b"] and config.max_turns == 4
    config = parse_config({}, {"simulated_user": '{"goal": "g", "facts": ["x"]}'}, env={})
    assert config.simulated_user is not None and config.simulated_user.facts == ["x"]


def test_user_messages_expanded_by_promptfoo_is_explained() -> None:
    with pytest.raises(ProviderConfigError, match="disableVarExpansion"):
        parse_config({}, {"user_messages": "Yes please"}, env={})


def test_promptfoo_keys_in_the_provider_config_are_ignored() -> None:
    config = parse_config({"workers": 2, "timeout": 1000, "pythonExecutable": "python3"}, {"user_messages": ["a"]},
                          env={})
    assert config.agent is None  # the factory's default agent
