"""What the stored record keeps of a long text: the first MAX_CHARS and a marker with the full size."""

from __future__ import annotations

from agent_evals.record.caps import MAX_CHARS, cap_text, cap_value, full_size


def test_a_long_text_keeps_its_head_and_says_how_much_was_cut() -> None:
    text = "a" * 10_000_000
    kept = cap_text(text)
    assert kept == "a" * MAX_CHARS + f"…[cut {10_000_000 - MAX_CHARS:,} of 10,000,000 characters]"
    assert full_size(kept) == 10_000_000
    assert cap_text("short") == "short" and full_size("short") == 5
    assert cap_text("x" * MAX_CHARS) == "x" * MAX_CHARS  # at the cap: nothing cut


def test_every_text_of_a_value_is_capped_at_any_depth() -> None:
    value = {"query": "q" * 20, "nested": [{"deep": "d" * 20}, 3, None, True], "k" * 20: 1.5}
    assert cap_value(value, limit=8) == {
        "query": "qqqqqqqq…[cut 12 of 20 characters]",
        "nested": [{"deep": "dddddddd…[cut 12 of 20 characters]"}, 3, None, True],
        "kkkkkkkk…[cut 12 of 20 characters]": 1.5,
    }
