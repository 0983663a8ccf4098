import asyncio

import pytest

from agent_evals.conversation.rule_users import ConfirmingUser, is_finished
from agent_evals.conversation.users import Turn, UserMessage

URL = "http://127.0.0.1:8400/repos/spokes/pullrequest/12"


def _next(user: ConfirmingUser, *replies: str) -> UserMessage:
    turns = [Turn(user="msg", assistant=r) for r in replies]
    return asyncio.run(user.next(turns))


def test_asks_then_confirms_then_stops_done_on_a_pr_link() -> None:
    user = ConfirmingUser(params={"request": "Copy crm-dev-neu", "confirm": "Yes."})
    assert _next(user) == UserMessage(text="Copy crm-dev-neu")
    assert _next(user, "Shall I create the pull request?") == UserMessage(text="Yes.")
    assert _next(user, "Shall I?", f"Done: {URL}") == UserMessage(end="done")


def test_gives_up_after_max_messages() -> None:
    user = ConfirmingUser(params={"request": "Copy", "max_messages": 2})
    assert _next(user, "Hmm?") == UserMessage(text="Yes, that's right, please go ahead.")
    assert _next(user, "Hmm?", "Hmm?") == UserMessage(end="gave_up")


@pytest.mark.parametrize(
    ("reply", "finished"),
    [
        (f"Here it is: {URL}", True),
        ("I can't create spokes in that region.", True),
        ("I cannot do that: the address space overlaps.", True),
        ("I'm unable to find that spoke.", True),
        ("I can create it now. Shall I?", False),
        ("The pull request is ready for review.", False),  # no link: not done yet
    ],
)
def test_is_finished(reply: str, finished: bool) -> None:
    assert is_finished(reply) is finished


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "param 'request' must be a non-empty string, got None"),
        ({"request": "  "}, "param 'request' must be a non-empty string"),
        ({"request": "x", "confirm": 3}, "param 'confirm' must be a non-empty string, got 3"),
        ({"request": "x", "max_messages": 0}, "max_messages must be a whole number from 1 to 100, got 0"),
        ({"request": "x", "max_messages": True}, "max_messages must be a whole number"),
        ({"request": "x", "reqeust": "y"}, "unknown param(s) reqeust; allowed: request, confirm, max_messages"),
    ],
)
def test_bad_params_say_what_is_wrong(params: dict, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        ConfirmingUser(params=params)
    assert message in str(caught.value)
