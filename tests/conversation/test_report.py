from agent_evals.conversation.report import render_output, token_usage
from agent_evals.record import End, RunRecord, Turn, Usage

from .fakes import tool_call


def _record() -> RunRecord:
    get = tool_call("get_spoke", {"name": "a"}, name="a").placed(turn=1, index=1)
    bad = tool_call("validate_spoke_config", "schema: missing name", outcome="tool_error", config={}).placed(turn=1, index=2)
    return RunRecord(case_id="C01", turns=[Turn("copy a", "Shall I?", (get, bad)), Turn("yes", "Done")], end=End("done"))


def test_output_shows_turns_tool_calls_and_the_end() -> None:
    assert render_output(_record()) == (
        "User: copy a\n"
        '  [tool] get_spoke({"name": "a"}) -> ok\n'
        "  [tool] validate_spoke_config({\"config\": {}}) -> tool_error: schema: missing name\n"
        "Assistant: Shall I?\n\n"
        "User: yes\n"
        "Assistant: Done\n\n"
        "[conversation ended: done]"
    )


def test_single_turn_output_is_the_answer_alone() -> None:
    record = _record()
    assert render_output(record, single_turn=True) == "Done"
    record.end = End.failed("model", "LLMError: gone")
    assert render_output(record, single_turn=True) == "Done\n[error (model): LLMError: gone]"


def test_output_of_a_broken_off_turn() -> None:
    record = _record()
    record.pending = Turn("and more?")
    record.end = End.failed("model", "LLMError: gone")
    assert render_output(record).endswith(
        "User: and more?\nAssistant: (no reply)\n\n[conversation ended: error]\n[error (model): LLMError: gone]"
    )


def test_token_usage_in_promptfoo_shape() -> None:
    assert token_usage(Usage(10, 5, 15, 2, 0.01)) == {"total": 15, "prompt": 10, "completion": 5, "numRequests": 2}
