"""A huge tool argument: the checks grade it whole in the worker; Promptfoo stores a capped copy."""

from __future__ import annotations

import json
from typing import Any

from agent_evals.packs.spoke.scripts import SpokeCopy
from agent_evals.record import RunRecord
from agent_evals.record.caps import MAX_CHARS, full_size
from agent_evals.testing.conversations import ConversationScript
from agent_evals.testing.scripted_openai import Reply
from tests.conftest import PROJECT_ROOT

from .conftest import Call

COPY = SpokeCopy("[K01]", new_name="crm8-dev-neu", address_space="10.87.0.0/22")
BIG = "network " * 2_500 + "the end"  # 20,007 characters, beyond the cap
CHECK = {"name": "argument_match", "tool": "search_docs", "args": {"query": BIG}, "mode": "exact"}


def _run(converse: Call, assertion_type: str) -> dict[str, Any]:
    steps = [Reply.tool_calls([("search_docs", {"query": BIG})]), "Nothing found."]
    value = (f"file://{PROJECT_ROOT}/assertions/kit.js:argument_match" if assertion_type == "javascript"
             else f"file://{PROJECT_ROOT}/assertions/argument_match.py")
    config = {k: v for k, v in CHECK.items() if k != "name"}
    asserts = [{"type": assertion_type, "value": value, "metric": "query", "config": config}]
    # the generic pack: no end-state snapshot (the spoke pack's holds the portal's whole schema)
    return converse([ConversationScript(COPY.key, steps)], "K01", {"user_messages": [COPY.request]}, asserts=asserts,
                    config={"pack": "generic"})


def test_the_check_grades_the_whole_argument_and_the_stored_record_keeps_a_capped_one(converse: Call) -> None:
    result = _run(converse, "javascript")  # the suites' fast path: graded in the worker

    metadata = result["metadata"]
    [check] = metadata["checks"]
    assert check["pass"] is True, check["reason"]  # the whole 20,007 characters matched, "the end" included
    assert check["config"]["args"]["query"] == BIG  # kept whole: assertions/kit.js matches it with the test's
    [call] = metadata["tool_calls"]
    stored = call["arguments"]["query"]
    assert stored == BIG[:MAX_CHARS] + f"…[cut {len(BIG) - MAX_CHARS:,} of {len(BIG):,} characters]"
    assert full_size(stored) == len(BIG) and full_size(call["raw_arguments"]) == len(json.dumps({"query": BIG}))
    record = {k: v for k, v in metadata.items() if k != "checks"}  # (the checks keep the test's own config)
    assert len(json.dumps(record)) < 2 * MAX_CHARS + 20_000  # arguments and raw_arguments capped, nothing whole
    RunRecord.from_metadata(metadata)  # still a record the report and the cleanup read


def test_a_python_assertion_promptfoo_runs_reads_the_whole_stored_record(converse: Call) -> None:
    result = _run(converse, "python")  # the Python path: Promptfoo's own process reads the metadata
    [call] = result["metadata"]["tool_calls"]
    assert call["arguments"]["query"] == BIG
