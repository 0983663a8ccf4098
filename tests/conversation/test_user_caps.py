"""The simulated user's completion cap: sent with each request; a reply cut off at it is an error."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from agent_evals.conversation.metering import UserSimulatorError
from agent_evals.conversation.users import SimulatedUser, TruncatedUserReply, UserMessage
from agent_evals.llm import ChatResponse, Usage


class OneReply:
    """A user model answering one fixed response, remembering the keyword arguments."""

    model = "user-model"

    def __init__(self, response: ChatResponse) -> None:
        self.response = response
        self.kwargs: list[dict[str, Any]] = []

    async def complete(self, messages: Sequence[Any], **kwargs: Any) -> ChatResponse:
        self.kwargs.append(kwargs)
        return self.response


def next_message(model: OneReply, **kwargs: Any) -> UserMessage:
    user = SimulatedUser(llm=model, goal="Copy crm-dev-neu", **kwargs)
    return asyncio.run(user.next([]))


def test_the_cap_goes_with_the_request() -> None:
    model = OneReply(ChatResponse("Please copy crm-dev-neu.", finish_reason="stop"))
    assert next_message(model, max_tokens=120) == UserMessage.say("Please copy crm-dev-neu.")
    assert model.kwargs[0]["max_tokens"] == 120


def test_no_cap_given_leaves_the_models_own() -> None:
    model = OneReply(ChatResponse("Hi", finish_reason="stop"))
    next_message(model)
    assert "max_tokens" not in model.kwargs[0]


def test_a_reply_cut_off_at_the_cap_is_a_user_simulator_error_naming_the_cap() -> None:
    model = OneReply(ChatResponse("I need a network that " + "is very " * 50, finish_reason="length",
                                  usage=Usage(10, 300, 310, 1)))
    with pytest.raises(TruncatedUserReply) as caught:
        next_message(model, max_tokens=300)
    error = caught.value
    assert isinstance(error, UserSimulatorError) and error.kind == "user_simulator"
    message = str(error)
    assert message.startswith("the simulated user's reply was cut off at 300 tokens (its completion cap: "
                              "LLM_MAX_TOKENS_USER or the provider's user_max_tokens): 'I need a network that is very")
    assert message.endswith("…'") and "\n" not in message


def test_without_a_known_cap_the_tokens_spent_are_named() -> None:
    model = OneReply(ChatResponse("", finish_reason="length", usage=Usage(10, 77, 87, 1)))
    with pytest.raises(TruncatedUserReply, match="cut off at 77 tokens"):
        next_message(model)


@pytest.mark.parametrize("reason", ["stop", None, "eos", "content_filter"])
def test_other_finish_reasons_are_read_as_usual(reason: str | None) -> None:
    model = OneReply(ChatResponse("Thanks! [DONE]", finish_reason=reason))
    assert next_message(model) == UserMessage.stop("done")
