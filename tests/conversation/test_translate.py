from agent_evals.conversation.translate import Translation


def test_learns_differing_scalars_at_the_same_place() -> None:
    t = Translation()
    t.learn(
        {"id": 3, "url": "http://127.0.0.1:9000/repos/spokes/pullrequest/3", "status": "active", "n": [1, 2]},
        {"id": 17, "url": "http://127.0.0.1:8123/repos/spokes/pullrequest/17", "status": "active", "n": [1, 2]},
    )
    assert t.numbers == {3: 17}
    assert t.strings == {
        "http://127.0.0.1:9000/repos/spokes/pullrequest/3": "http://127.0.0.1:8123/repos/spokes/pullrequest/17"
    }


def test_lists_of_other_lengths_and_booleans_are_not_learned() -> None:
    t = Translation()
    t.learn({"a": [1, 2], "ok": True}, {"a": [1, 2, 3], "ok": False})
    assert t.numbers == {} and t.strings == {}


def test_rewrites_text_and_arguments() -> None:
    t = Translation()
    t.learn({"id": 3, "url": "http://h:1/repos/spokes/pullrequest/3"}, {"id": 9, "url": "http://h:2/repos/spokes/pullrequest/9"})
    assert t.text("Done: http://h:1/repos/spokes/pullrequest/3 .") == "Done: http://h:2/repos/spokes/pullrequest/9 ."
    assert t.arguments('{"id": 3, "other": 4}') == '{"id": 9, "other": 4}'
    assert t.arguments("{not json") == "{not json"


def test_short_strings_are_not_replaced_inside_text() -> None:
    t = Translation()
    t.learn({"s": "abc"}, {"s": "xyz"})
    assert t.text("abcdef") == "abcdef"
    assert t.value({"s": "abc"}) == {"s": "xyz"}  # an exact leaf is still translated


def test_numbers_are_learned_and_replaced_only_under_id_keys() -> None:
    t = Translation()
    t.learn({"id": 100, "count": 4, "pr": {"pull_request_id": 5}}, {"id": 143, "count": 5, "pr": {"pull_request_id": 6}})
    assert t.numbers == {100: 143, 5: 6}
    assert t.value({"id": 100, "priority": 100, "ids": [100, 7]}) == {"id": 143, "priority": 100, "ids": [143, 7]}
