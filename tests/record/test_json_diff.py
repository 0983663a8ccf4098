"""The first place two JSON values part, as a replay's divergence names it."""

from __future__ import annotations

import pytest

from agent_evals.record.json_diff import ABSENT, first_difference, shown


@pytest.mark.parametrize(
    ("recorded", "live", "found"),
    [
        ({"a": 1, "b": [1, 2]}, {"a": 1.0, "b": [1, 2]}, None),  # numbers by value
        ({"a": True}, {"a": 1}, ("/a", True, 1)),  # a boolean is not a number
        ({"config": {"name": "x", "tags": ["a", "b"]}}, {"config": {"name": "x", "tags": ["a", "c"]}},
         ("/config/tags/1", "b", "c")),
        ({"a": 1}, {"a": 1, "extra": 2}, ("/extra", ABSENT, 2)),
        ({"a": 1, "gone": 2}, {"a": 1}, ("/gone", 2, ABSENT)),
        ([1, 2], [1], ("/1", 2, ABSENT)),
        ({"a/b": 1}, {"a/b": 2}, ("/a~1b", 1, 2)),  # a JSON Pointer escapes "/"
        ("x", "y", ("/", "x", "y")),
    ],
)
def test_first_difference(recorded: object, live: object, found: tuple[str, object, object] | None) -> None:
    assert first_difference(recorded, live) == found


def test_values_are_shown_as_short_json() -> None:
    assert shown("crm") == '"crm"' and shown(ABSENT) == "(absent)" and shown({"a": [1]}) == '{"a": [1]}'
    assert shown("x" * 200).endswith("…") and len(shown("x" * 200)) == 80
