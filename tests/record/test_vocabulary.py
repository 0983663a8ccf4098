"""record.is_one_of / one_of: a closed vocabulary read from untyped data."""

from __future__ import annotations

import pytest

from agent_evals.record import END_REASONS, STOP_REASONS, is_one_of, one_of


@pytest.mark.parametrize(
    ("value", "expected"),
    [("max_tokens", True), ("done", True), ("finished", False), ("", False), (None, False), (3, False),
     (["done"], False), ("DONE", False)],
)
def test_is_one_of(value: object, expected: bool) -> None:
    assert is_one_of(value, END_REASONS) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("max_tokens", "max_tokens"), ("max_tool_rounds", "max_tool_rounds"), ("reply", "reply"),
     ("stop", "reply"), (None, "reply"), (1, "reply")],
)
def test_one_of_falls_back_to_the_default(value: object, expected: str) -> None:
    assert one_of(value, STOP_REASONS, "reply") == expected
