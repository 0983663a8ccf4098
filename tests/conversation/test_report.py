from agent_evals.contract import REQUIRED_KEYS, ToolCallRecord
from agent_evals.conversation.driver import ConversationRecord
from agent_evals.conversation.report import build_metadata, render_output, token_usage, transcript
from agent_evals.conversation.users import Turn
from agent_evals.llm.types import Usage

from .fakes import tool_call

AGENT = {"name": "spoke", "model": "m", "temperature": 0.2, "instructions_sha256": "ab"}


def _record() -> ConversationRecord:
    get = tool_call("get_spoke", {"name": "a"}, name="a")
    bad = tool_call("validate_spoke_config", "schema: missing name", is_error=True, config={})
    record = ConversationRecord(turns=[Turn("copy a", "Shall I?", (get, bad)), Turn("yes", "Done")])
    record.tool_calls = [(1, get), (1, bad)]
    record.end = "done"
    record.agent_usage = Usage(10, 5, 15, 2, 0.01)
    return record


def test_output_shows_turns_tool_calls_and_the_end() -> None:
    assert render_output(_record()) == (
        "User: copy a\n"
        '  [tool] get_spoke({"name": "a"}) -> ok\n'
        "  [tool] validate_spoke_config({\"config\": {}}) -> error: schema: missing name\n"
        "Assistant: Shall I?\n\n"
        "User: yes\n"
        "Assistant: Done\n\n"
        "[conversation ended: done]"
    )


def test_single_turn_output_is_the_answer_alone() -> None:
    record = _record()
    assert render_output(record, single_turn=True) == "Done"
    record.error = "LLMError: gone"
    assert render_output(record, single_turn=True) == "Done\n[error: LLMError: gone]"


def test_output_of_a_broken_off_turn() -> None:
    record = _record()
    record.pending_user_message = "and more?"
    record.end, record.error = "error", "LLMError: gone"
    assert render_output(record).endswith(
        "User: and more?\nAssistant: (no reply)\n\n[conversation ended: error]\n[error: LLMError: gone]"
    )
    assert transcript(record)[-1] == {"role": "user", "content": "and more?", "turn": 3, "tool_calls": []}


def test_metadata_follows_the_contract() -> None:
    metadata = build_metadata(_record(), AGENT, Usage(3, 2, 5, 1, 0.0), case_id="C01")
    assert set(REQUIRED_KEYS) <= set(metadata) and metadata["agent_evals"] == 1
    assert metadata["tool_calls"][1] == {
        "name": "validate_spoke_config", "arguments": {"config": {}}, "raw_arguments": '{"config": {}}',
        "result": "schema: missing name", "is_error": True, "turn": 1,
    }
    assert set(metadata["tool_calls"][0]) == set(ToolCallRecord.__annotations__)
    assert [(e["role"], e["turn"], e["tool_calls"]) for e in metadata["transcript"]] == [
        ("user", 1, []), ("assistant", 1, ["get_spoke", "validate_spoke_config"]), ("user", 2, []),
        ("assistant", 2, []),
    ]
    assert metadata["turns"] == 2 and metadata["final_reply"] == "Done" and metadata["case_id"] == "C01"
    assert metadata["usage"] == {
        "agent": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, "calls": 2, "cost": 0.01},
        "user": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5, "calls": 1, "cost": 0.0},
    }
    assert "error" not in metadata


def test_token_usage_in_promptfoo_shape() -> None:
    assert token_usage(Usage(10, 5, 15, 2, 0.01)) == {"total": 15, "prompt": 10, "completion": 5, "numRequests": 2}
