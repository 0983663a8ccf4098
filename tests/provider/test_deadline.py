"""The conversation deadline: a conversation that runs long ends as an error of kind ``timeout`` with
everything done so far, never as Promptfoo's JavaScript stack trace."""

from __future__ import annotations


import pytest

from agent_evals.provider.deadline import MARGIN_S, DeadlineError, configured_deadline_s, deadline_s
from agent_evals.testing.conversations import ConversationScript
from agent_evals.packs.spoke.scripts import SpokeCopy
from agent_evals.testing.scripted_openai import Reply
from tests.spoke_prs import abandoned, prs

from .conftest import Call, check_contract

COPY = SpokeCopy("[D01]", new_name="crm6-dev-weu", address_space="10.88.0.0/22")


def test_a_long_conversation_ends_at_its_deadline_with_everything_done_so_far(converse: Call) -> None:
    steps = COPY.agent_steps()
    # the reply after the PR never comes in time: only the deadline can end the conversation (the
    # deadline leaves the four steps before it time enough on a loaded machine)
    slow = [*steps[:4], Reply.text("Done, eventually.").with_delay(600), *steps[5:]]
    result = converse([ConversationScript(COPY.key, slow)], "D01", {"user_messages": COPY.fixed_messages()},
                      config={"deadline_s": 6})

    assert result["error"].startswith("[timeout] the conversation ran past its deadline of 6 s after 2 user message(s)")
    metadata = result["metadata"]
    check_contract(metadata)
    assert metadata["error_kind"] == "timeout" and metadata["ended_by"] == "error"
    assert [c["name"] for c in metadata["tool_calls"]][-1] == "create_spoke_pull_request"  # the calls made so far
    assert len(prs(metadata)) == 1 and abandoned(metadata["cleanup"]) == [prs(metadata)[0]["id"]]
    assert metadata["usage"]["agent"]["calls"] == 4
    assert "User: " + COPY.request in result["output"]


@pytest.mark.parametrize(
    ("configured", "promptfoo_ms", "env", "expected"),
    [
        (None, None, {}, 300 - MARGIN_S),  # Promptfoo's default worker timeout caps the kit's default
        (None, None, {"REQUEST_TIMEOUT_MS": "935000"}, 900.0),  # the runner's setting: the kit's default
        (60.0, None, {}, 60.0),
        (None, None, {"AGENT_EVALS_DEADLINE_S": "120"}, 120.0),
        (600.0, 100_000, {}, 100 - MARGIN_S),  # a provider config.timeout caps it too
        (0.5, None, {}, 1.0),  # never below a second
    ],
)
def test_the_deadline_stays_below_promptfoos_limit(configured, promptfoo_ms, env, expected) -> None:  # noqa: ANN001
    assert deadline_s(configured, promptfoo_ms, env) == expected


@pytest.mark.parametrize("raw", ["0", "-3", "soon", "999999"])
def test_a_bad_deadline_setting_is_a_config_error(raw: str) -> None:
    with pytest.raises(DeadlineError, match="AGENT_EVALS_DEADLINE_S must be a number of seconds"):
        configured_deadline_s({"AGENT_EVALS_DEADLINE_S": raw})


def test_a_bad_deadline_in_the_provider_config_is_named(converse: Call) -> None:
    result = converse([COPY.script()], "D02", {"user_messages": COPY.fixed_messages()}, config={"deadline_s": 0})
    assert result["error"].startswith("[config] bad provider configuration: deadline_s: Input should be greater than 0")
