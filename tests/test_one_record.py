"""One concept, one type: a tool call, a run's end and its usage each have one definition."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "agent_evals"


def _sources() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in SRC.rglob("*.py")}


def test_one_tool_call_type() -> None:
    classes = {
        (path.relative_to(SRC).as_posix(), name)
        for path, text in _sources().items()
        for name in re.findall(r"^class (\w*ToolCall\w*)\b", text, re.MULTILINE)
    }
    assert classes == {("record/tool_call.py", "ToolCall"), ("record/tool_call.py", "ToolCallFormatError")}


def test_one_end_vocabulary_and_one_usage_type() -> None:
    sources = _sources()
    ends = [p for p, t in sources.items() if re.search(r'Literal\[\s*"done", "gave_up", "max_turns"', t)]
    assert [p.relative_to(SRC).as_posix() for p in ends] == ["record/ends.py"]
    usages = [p for p, t in sources.items() if re.search(r"^class Usage\b", t, re.MULTILINE)]
    assert [p.relative_to(SRC).as_posix() for p in usages] == ["record/usage.py"]


def test_nothing_reads_the_old_contract_or_infers_outcomes_from_text() -> None:
    for path, text in _sources().items():
        assert "agent_evals.contract" not in text, path
        assert 'startswith("Error")' not in text or path.name == "loop.py", path  # the loop writes the prefix
