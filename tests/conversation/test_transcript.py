import json

import pytest

from agent_evals.conversation.transcript import render_output, result_text, token_usage, tool_line
from agent_evals.record import End, RunRecord, ToolCall, Turn, Usage

from .fakes import tool_call

PR_URL = "http://127.0.0.1:8400/repos/spokes/pullrequest/7"


def _placed(call: ToolCall, turn: int, index: int) -> ToolCall:
    return call.placed(turn=turn, index=index)


def _record() -> RunRecord:
    get = _placed(tool_call("get_spoke", {"name": "a", "config": {"x": 1}}, name="a"), 1, 1)
    bad = _placed(tool_call("validate_spoke_config", {"valid": False, "errors": [
        {"path": "/name", "message": "does not match the file name rule"}, {"path": "/tags", "message": "x"}]},
        config={"name": "b"}), 1, 2)
    pr = _placed(tool_call("create_spoke_pull_request", {"id": 7, "url": PR_URL, "status": "active",
                                                          "validation_status": "succeeded"},
                           spoke_name="b", config={f"k{i}": i for i in range(14)}, title="Add spoke b"), 2, 3)
    return RunRecord(case_id="C01", turns=[Turn("copy a", "Shall I?", (get, bad)), Turn("yes", f"Done: {PR_URL}", (pr,))],
                     end=End("done"))


def test_the_transcript_tells_what_each_tool_call_did() -> None:
    assert render_output(_record()) == (
        "User: copy a\n"
        '  [tool] get_spoke(name="a") -> ok: a\n'
        "  [tool] validate_spoke_config(config={…1 keys}) -> invalid: /name: does not match the file name rule "
        "(and 1 more)\n"
        "Assistant: Shall I?\n\n"
        "User: yes\n"
        '  [tool] create_spoke_pull_request(spoke_name="b", title="Add spoke b", config={…14 keys}) -> '
        "PR #7 active, validation succeeded\n"
        f"Assistant: Done: {PR_URL}\n\n"
        "[conversation ended: done, by the user]"
    )


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (tool_call("get_spoke", "Error executing tool get_spoke: unknown spoke 'x': no spokes/x.json",
                   outcome="tool_error", name="x"), "error: unknown spoke 'x': no spokes/x.json"),
        (tool_call("complete_pull_request", "'complete_pull_request' is not one of your tools, so it was not called; "
                   "your tools are: a, b", outcome="refused", id=1),
         "refused: 'complete_pull_request' is not one of your tools, so it was not called"),
        (ToolCall.request("c", "get_spoke", "[1, 2]").with_outcome("invalid_arguments", "x"),
         "not run: the arguments were not a JSON object"),
        (tool_call("list_spokes", {"spokes": [{"name": "a"}, {"name": "b"}]}), "2 spokes"),
        (tool_call("get_doc", "x" * 5000), "ok: " + "x" * 95 + "…"),  # huge results are cut
        (tool_call("get_doc", "\x00\x01binary\x02"), "ok: ??binary?"),  # binary-looking text is made printable
        (tool_call("get_doc", {"a": 1, "b": 2, "c": 3, "d": 4}), "ok (4 fields)"),
    ],
    ids=["tool error", "refused", "invalid arguments", "a list", "huge", "binary", "a plain object"],
)
def test_result_summaries(call: ToolCall, expected: str) -> None:
    assert result_text(call) == expected


def test_arguments_that_are_not_an_object_are_shown_as_such() -> None:
    call = ToolCall.request("c", "get_spoke", "{not json").with_outcome("invalid_arguments", "x")
    assert tool_line(call) == "  [tool] get_spoke(<not a JSON object: {not json>) -> not run: the arguments were not " \
                              "a JSON object"


def test_single_turn_output_shows_the_tool_lines_then_the_answer() -> None:
    docs = _placed(tool_call("search_docs", {"results": [1, 2, 3]}, query="private link"), 1, 1)
    record = RunRecord(turns=[Turn("Do I need private link?", "Yes, for prod.", (docs,))], end=End("done"))
    assert render_output(record, single_turn=True) == (
        '  [tool] search_docs(query="private link") -> 3 results\nYes, for prod.'
    )
    record.end = End.failed("model", "LLMError: gone")
    assert render_output(record, single_turn=True).endswith("\n[conversation ended: error (model): LLMError: gone]")


def test_a_broken_off_turn_and_an_empty_reply() -> None:
    record = _record()
    record.turns[0] = Turn("copy a", "", record.turns[0].tool_calls)
    record.pending = Turn("and more?")
    record.end = End.failed("model", "LLMError: gone")
    output = render_output(record)
    assert "Assistant: (empty reply)" in output
    assert output.endswith("User: and more?\nAssistant: (no reply)\n\n[conversation ended: error (model): LLMError: gone]")


def test_a_long_conversation_stays_a_few_lines_per_turn() -> None:
    turns = [Turn(f"message {i}", f"answer {i}", (_placed(tool_call("get_spoke", {"name": "a"}, name="a"), i + 1, i + 1),))
             for i in range(100)]
    output = render_output(RunRecord(turns=turns, end=End("max_turns")))
    assert len(output.splitlines()) == 100 * 4 + 1 and output.endswith("[conversation ended: max_turns, by the limit]")
    assert max(len(line) for line in output.splitlines()) < 120


def test_token_usage_in_promptfoo_shape() -> None:
    assert token_usage(Usage(10, 5, 15, 2, 0.01)) == {"total": 15, "prompt": 10, "completion": 5, "numRequests": 2}
    assert json.dumps(token_usage(Usage()))
