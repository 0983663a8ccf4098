"""The user checks against every golden conversation of every suite: none fires on the golden
conversations (nor goes to the judge on more than a tenth of them), and every user-side mutation
of each (an early done, an invented fact, a role swap, a leaked instruction, a repeated message)
is caught by the check it names. Pure: the recorded conversations, no portal (the self-check in
test_selfcheck.py replays one mutation per case for real)."""

from __future__ import annotations

from collections import Counter
import pytest

from agent_evals.conversation.cassette import Cassette
from agent_evals.golden.record import suite_pack
from agent_evals.golden.user_side import CaseUser, case_user, golden_users, user_mutations
from agent_evals.suites.discovery import Suite, discover
from agent_evals.user_checks import review


GOLDEN = golden_users()
SIMULATED = [(s, c, u) for s, c, u in GOLDEN if u is not None]


def test_every_suite_has_golden_conversations_with_a_simulated_user() -> None:
    # spoke-qa is single-turn; release-notes talks in fixed messages only (its simulated users are to come)
    assert {s.name for s, _, _ in SIMULATED} == {s.name for s in discover() if s.name not in ("spoke-qa", "release-notes")}
    assert len(SIMULATED) >= 70


@pytest.mark.parametrize(("suite", "cassette", "user"), SIMULATED, ids=[f"{s.name}-{c.case_id}" for s, c, _ in SIMULATED])
def test_no_finding_on_a_golden_conversation_and_every_mutation_caught(
    suite: Suite, cassette: Cassette, user: CaseUser
) -> None:
    clean = review(cassette.record, user.brief, user.framing, prompt=user.prompt)
    assert clean.review.findings == (), [f.line(cassette.case_id) for f in clean.review.findings]
    assert clean.review.skipped is None
    for mutation in user_mutations(cassette, user):
        found = review(mutation.cassette.record, user.brief, user.framing, prompt=user.prompt).review
        assert mutation.must_find in {f.check for f in found.findings}, (
            f"{cassette.case_id}: '{mutation.name}' was not caught by {mutation.must_find}: "
            f"{[f.line() for f in found.findings]}"
        )


def test_every_kind_of_mutation_is_made_and_the_judge_is_rarely_needed() -> None:
    made = Counter(m.name for _, c, u in SIMULATED for m in user_mutations(c, u))  # type: ignore[arg-type]
    assert set(made) == {"early done", "invented fact", "role swap", "leaked instruction", "repeated message"}
    assert made["invented fact"] == made["role swap"] == len(SIMULATED)
    asked = sum(1 for _, c, u in SIMULATED if review(c.record, u.brief, u.framing, prompt=u.prompt).questions)  # type: ignore[union-attr]
    assert asked / len(GOLDEN) < 0.10


def test_fixed_messages_are_not_checked() -> None:
    fixed = [(s, c) for s, c, u in GOLDEN if u is None]
    assert fixed
    for suite, cassette in fixed:
        result = review(cassette.record, case_user({"goal": "x"}, cassette, suite_pack(suite).user_framing).brief)  # type: ignore[union-attr]
        assert result.review.skipped is not None and result.review.findings == ()
