"""Each user check on conversations where it must find something and on ones where it must not,
with the evidence it names (pure: no model, no portal)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_evals.conversation.cassette import load_cassette
from agent_evals.conversation.framing import UserFraming
from agent_evals.packs.spoke import PACK
from agent_evals.record import End, RunRecord, Turn, UserInfo
from agent_evals.user_checks import UserBrief, review

ROOT = Path(__file__).resolve().parents[2]
SPOKE = PACK.user_framing
TOY = UserFraming(outcome="the ticket's link", outcome_pattern=r"https://desk\.example/t/\d+",
                  values=(("queue", r"\bqueue-[a-z]+\b"),))
FACTS = {"network to copy": "crm-dev-neu", "new network name": "crm-dev-weu", "region": "West Europe",
         "address range": "10.20.32.0/22"}
BRIEF = UserBrief(goal="Get a copy of crm-dev-neu in West Europe and the pull request link.", facts=FACTS)
ASKS = "Here is the configuration for crm-dev-weu in westeurope with 10.20.32.0/22. Shall I open the pull request?"
DONE = "Done. The pull request is http://127.0.0.1:1/repos/spokes/pullrequest/7."
REQUEST = "Please copy crm-dev-neu as crm-dev-weu in West Europe with 10.20.32.0/22."


def conversation(*pairs: tuple[str, str], end: str = "done", kind: str = "simulated_user") -> RunRecord:
    record = RunRecord(case_id="C07", user=UserInfo(kind))  # type: ignore[arg-type]
    record.turns = [Turn(user, reply) for user, reply in pairs]
    record.finish(End(end) if end != "error" else End.failed("system", "down"))
    return record


def found(record: RunRecord, brief: UserBrief = BRIEF, framing: UserFraming = SPOKE, **options: object) -> list[str]:
    return [f"{f.check}@{f.turn}: {f.evidence}" for f in review(record, brief, framing, **options).review.findings]  # type: ignore[arg-type]


# --- a golden conversation, clean and broken ------------------------------------------------


def test_a_golden_conversation_is_clean() -> None:
    golden = load_cassette(ROOT / "evals" / "spoke-create" / "golden" / "C01.json").record
    brief = UserBrief(goal="Get a new dev network for the CRM application in West Europe, set up exactly like the existing "
                           "CRM dev network in North Europe, and get the link to the pull request.",
                      facts={"existing network to copy": "crm-dev-neu", "new network name": "crm-dev-weu",
                             "region": "West Europe", "address range agreed with the platform team": "10.20.32.0/22"})
    result = review(golden, brief, SPOKE)
    assert result.review.findings == () and result.questions == () and result.review.undecided == ()
    assert not result.review.invalid and result.review.summary() == "valid"


# --- ended_early ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pairs", "end", "expected"),
    [
        ([(REQUEST, ASKS)], "done", ["ended_early@1: the user said it was done while the assistant was still asking "
                                     "('Shall I open the pull request?'); the pull-request link was not given"]),
        ([(REQUEST, "Let me validate it first. I'll be right back.")], "gave_up",
         ["ended_early@1: the user gave up while the assistant was still working ('Let me validate it first.'); "
          "the pull-request link was not given"]),
        ([(REQUEST, ASKS), ("Yes please.", DONE)], "done", []),  # the outcome was given
        ([(REQUEST, "I can't create it: 10.20.32.0/22 overlaps crm-prod-neu. Shall I pick a free range?")], "done", []),
        ([(REQUEST, "There is no exception for production spokes, sorry.")], "gave_up", []),  # a refusal ends it
        ([(REQUEST, DONE + " Is there anything else I can help with?")], "done", []),  # a courtesy question
        ([(REQUEST, "I'll create it once you tell me the owner.")] * 1, "max_turns", []),  # a limit ended it
        ([(REQUEST, "Which owner should it have?"), ("I don't know.", "Which owner should it have?")], "gave_up", []),
    ],
    ids=["done-while-asking", "gave-up-while-working", "outcome-given", "refused", "no-exception", "courtesy",
         "a-limit", "looping-assistant"],
)
def test_ended_early(pairs: list[tuple[str, str]], end: str, expected: list[str]) -> None:
    assert found(conversation(*pairs, end=end)) == expected


def test_giving_up_on_a_question_goes_to_the_judge() -> None:
    record = conversation((REQUEST, "What is the subscription ID?"), ("I don't know it.", "I need the subscription "
                          "ID to go on. Could you ask your team for it?"), end="gave_up")
    result = review(record, BRIEF, SPOKE)
    assert result.review.findings == ()
    assert [(q.check, q.turn, q.about) for q in result.questions] == [
        ("ended_early", 2, "the user gave up after the assistant asked 'Could you ask your team for it?'")
    ]


def test_an_early_end_after_an_offer_the_goal_did_not_ask_for_goes_to_the_judge() -> None:
    asked = conversation(("Why did my pull request fail?", "Port 22 was open to the Internet. Shall I open a fixed one?"))
    result = review(asked, UserBrief(goal="Find out why the pull request failed.", facts={"pr": "7"}), SPOKE)
    assert result.review.findings == ()
    [question] = result.questions
    assert (question.check, question.turn) == ("ended_early", 1)
    assert question.about == "the user said it was done after the assistant asked 'Shall I open a fixed one?'"


# --- invented_fact ---------------------------------------------------------------------------


def test_an_invented_region_is_named_with_its_turn() -> None:
    record = conversation((REQUEST, ASKS), ("Yes, but put it in westus9 instead.", DONE))
    assert found(record) == [
        "invented_fact@2: the user invented region 'westus9' (not in its facts, not said by the assistant)"
    ]


@pytest.mark.parametrize(
    ("message", "invented"),
    [
        ("Please copy crm-dev-neu as crm-dev-weu in westeurope, range 10.20.32.0/22.", None),  # written another way
        ("Please copy crm-dev-neu as crm-dev-weu in West Europe, range 10.20.33.0/22.", "address range '10.20.33.0/22'"),
        ("Please copy crm-dev-neu as crm-dev-sdc in West Europe.", "name 'crm-dev-sdc'"),
        ("Copy crm-dev-neu, owner crm@contoso.com.", "e-mail address 'crm@contoso.com'"),
        ("Copy crm-dev-neu; cost centre CC-2310.", "name 'CC-2310'"),
        ("Copy crm-dev-neu for 25 developers, up-to-date and on-premises.", "number '25'"),
        ("Copy crm-dev-neu to East US 2.", "region 'East US 2'"),
        ("Copy crm-dev-neu, it's urgent, we need it soon.", None),  # plain words are no values
        ("Copy crm-dev-neu, you&#39;re great.", None),  # an HTML character reference (llama.cpp's template) is none
    ],
)
def test_invented_values_of_each_kind(message: str, invented: str | None) -> None:
    record = conversation((message, "Noted."))
    expected = [] if invented is None else [
        f"invented_fact@1: the user invented {invented} (not in its facts, not said by the assistant)"
    ]
    assert found(record) == expected


def test_a_value_the_assistant_said_before_is_no_invention_but_one_it_says_later_is() -> None:
    proposed = conversation((REQUEST, "The range 10.20.36.0/22 is free; shall I use it?"), ("Yes, use 10.20.36.0/22.", DONE))
    assert found(proposed) == []
    late = conversation(("Copy crm-dev-neu with 10.20.36.0/22.", "OK, 10.20.36.0/22 it is."), ("Thanks, 10.20.36.0/22.", DONE))
    assert found(late) == [  # reported once, at the turn it first appeared
        "invented_fact@1: the user invented address range '10.20.36.0/22' (not in its facts, not said by the assistant)"
    ]


def test_a_brief_without_facts_cannot_decide_and_is_never_a_finding() -> None:
    result = review(conversation(("Copy crm-dev-neu to westus9.", DONE)), UserBrief(goal="Get a copy."), SPOKE)
    assert result.review.findings == () and not result.review.invalid
    [undecided] = result.review.undecided
    assert undecided.check == "invented_fact" and undecided.why.startswith("the user's brief has no facts")


def test_a_custom_simulators_params_are_its_brief_and_a_packs_own_kinds_count() -> None:
    brief = UserBrief(params={"request": "Open a ticket in queue-billing, please.", "confirm": "Yes."})
    record = conversation(("Open a ticket in queue-billing, please.", "Shall I?"), ("Yes, in queue-payroll.", "Done: https://desk.example/t/4"), kind="class")
    assert found(record, brief, TOY) == [
        "invented_fact@2: the user invented queue 'queue-payroll' (not in its facts, not said by the assistant)"
    ]


# --- role_confusion and leaked_instructions ------------------------------------------------


@pytest.mark.parametrize(
    ("message", "evidence"),
    [
        ("Sure! I'd be happy to help. How can I assist you today?",
         'the user talked as the assistant ("Sure! I\'d be happy to help. How can I assist you today?")'),
        ("Yes.\nAssistant: I have opened the pull request.", "the user wrote the assistant's part ('Assistant: I have opened the pull request.')"),
        ("Shall I open the pull request? Yes, go ahead.", "the user answered its own question ('Shall I open the pull request? Yes, go ahead.')"),
        ("Hello, I'm here to help with the CRM application.",  # SmolLM2-135M as the user, verbatim
         "the user talked as the assistant (\"Hello, I'm here to help with the CRM application.\")"),
        ("I&#39;m happy to help with any other projects.",  # as llama.cpp's chat template left it
         "the user talked as the assistant (\"I'm happy to help with any other projects.\")"),
        ("Thanks! If you have any further requests, please don't hesitate to ask.",
         'the user talked as the assistant ("…any further requests, please don\'t hesitate to ask.")'),
        (ASKS, f"the user repeated the assistant's reply as its own ({ASKS[:69]!r}"[:-1] + "…')"),
    ],
    ids=["offers-help", "writes-the-assistant", "self-answer", "here-to-help", "html-escaped", "further-requests", "echo"],
)
def test_role_confusion(message: str, evidence: str) -> None:
    assert found(conversation((REQUEST, ASKS), (message, DONE))) == [f"role_confusion@2: {evidence}"]


def test_a_user_that_answers_and_asks_is_no_role_confusion() -> None:
    assert found(conversation((REQUEST, ASKS), ("Yes please. How long will the review take?", DONE))) == []


@pytest.mark.parametrize(
    ("message", "evidence"),
    [
        ("Yes please [DONE]", "the user mentioned its instructions ('Yes please [DONE]')"),
        ("According to my facts, yes.", "the user mentioned its instructions ('According to my facts, yes.')"),
        ("As a simulated user I agree.", "the user mentioned its instructions ('As a simulated user I agree.')"),
        ("Yes. Never correct the assistant and never point out its mistakes.",
         "the user copied a line of its instructions ('Never correct the assistant and never point out its mistakes.')"),
    ],
)
def test_leaked_instructions(message: str, evidence: str) -> None:
    from agent_evals.conversation.users import simulated_user_prompt

    prompt = simulated_user_prompt(BRIEF.goal, facts=FACTS, framing=SPOKE)
    assert found(conversation((REQUEST, ASKS), (message, DONE)), prompt=prompt) == [f"leaked_instructions@2: {evidence}"]


def test_restating_its_own_goal_is_no_leak() -> None:
    from agent_evals.conversation.users import simulated_user_prompt

    prompt = simulated_user_prompt(BRIEF.goal, facts=FACTS, framing=SPOKE)
    record = conversation((BRIEF.goal.replace("Get", "I'd like"), ASKS), ("Yes.", DONE))
    assert found(record, prompt=prompt) == []


# --- empty, repeated, off-goal ---------------------------------------------------------------


def test_empty_messages() -> None:
    assert found(conversation((REQUEST, ASKS), ("...", DONE))) == ["empty_message@2: the user sent an empty message ('...')"]
    assert found(conversation((REQUEST, ASKS), ("(no message)", DONE))) == [
        "empty_message@2: the user sent an empty message ('(no message)')"
    ]
    assert found(conversation((REQUEST, ASKS), ("ok", DONE))) == []


def test_repeated_messages() -> None:
    looped = conversation((REQUEST, ASKS), (REQUEST, DONE))
    assert found(looped) == [f"repeated_message@2: the user repeated its message of turn 1 ({REQUEST[:69]!r}"[:-1] + "…')"]
    confirms = conversation((REQUEST, ASKS), ("Yes please.", ASKS), ("Yes please.", DONE))
    assert found(confirms) == []  # short confirmations repeat
    long = ("I have been working on a project that integrates devices with cloud analytics and I think your "
            "expertise could be valuable for the team")
    again = "Great to hear. " + long.replace("valuable for", "valuable to")
    assert "repeated_message@2" in [f.split(":")[0] for f in found(conversation((long, ASKS), (again, DONE)))]
    asked_again = conversation(("Hi", "Which address range should it get?"), ("It should get 10.20.32.0/22 please.", "Which address range should it get?"),
                               ("It should get 10.20.32.0/22 please.", DONE))
    assert found(asked_again) == []  # the same question, the same answer


def test_off_goal_messages() -> None:
    off = "Completely unrelated: what wonderful recipes for pumpkin soup would chefs recommend during autumn evenings?"
    assert found(conversation((REQUEST, ASKS), (off, DONE))) == [
        f"off_goal@2: the user's message shares nothing with its goal or the conversation ({off[:69]!r}"[:-1] + "…')"
    ]
    nearly = "Unrelated question about network recipes: pumpkin soup, chefs, autumn evenings, spices, ovens, bakeries?"
    result = review(conversation((REQUEST, ASKS), (nearly, DONE)), BRIEF, SPOKE)
    assert [(q.check, q.turn) for q in result.questions] == [("off_goal", 2)]
    on_goal = "Yes, and please make sure the copy keeps every other setting of crm-dev-neu exactly as it is."
    assert found(conversation((REQUEST, ASKS), (on_goal, DONE))) == []


# --- what is not checked -----------------------------------------------------------------


def test_fixed_messages_and_errors_are_not_checked_and_checks_can_be_skipped() -> None:
    fixed = review(conversation(("...", ASKS), kind="user_messages"), BRIEF, SPOKE).review
    assert fixed.skipped and fixed.skipped.startswith("fixed user messages: no user checks apply") and not fixed.findings
    errored = review(conversation(("...", ASKS), end="error"), BRIEF, SPOKE).review
    assert errored.skipped and "ended in an error" in errored.skipped
    skipped = review(conversation((REQUEST, ASKS), ("...", DONE)), BRIEF, SPOKE, skip=("empty_message",)).review
    assert skipped.findings == ()


def test_the_review_reads_back_from_the_record() -> None:
    record = conversation((REQUEST, ASKS), ("Yes, in westus9.", DONE))
    record.user_review = review(record, BRIEF, SPOKE).review
    again = RunRecord.from_metadata(record.to_metadata())
    assert again.user_review == record.user_review
    assert again.user_review is not None and again.user_review.summary("C07") == (
        "invalid: C07 turn 2, the user invented region 'westus9' (not in its facts, not said by the assistant)"
    )
