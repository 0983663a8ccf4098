"""The judge's replies read as verdicts, or refused with the reason (one table, passing and failing side by side)."""

from __future__ import annotations

import pytest

from agent_evals.judging.verdicts import read_verdict
from agent_evals.llm.types import ChatResponse
from agent_evals.record import Verdict


@pytest.mark.parametrize(
    ("content", "finish", "scored", "verdict", "problem"),
    [
        ('{"pass": true, "reason": "It does."}', "stop", False, Verdict("s", True, "It does."), None),
        ('Sure:\n```json\n{"pass": false, "reason": "It  does   not."}\n```', "stop", False,
         Verdict("s", False, "It does not."), None),
        ('{"pass": "yes", "reason": "ok"}', "stop", False, Verdict("s", True, "ok"), None),
        ('{"pass": true}', "stop", False, Verdict("s", True, "(the judge gave no reason)"), None),
        ('{"pass": true, "score": 0.4, "reason": "r"}', "stop", True, Verdict("s", True, "r", 0.4), None),
        ('{"pass": true, "score": 0.4, "reason": "r"}', "stop", False, Verdict("s", True, "r"), None),  # not asked
        ('{"pass": true, "score": 4, "reason": "r"}', "stop", True, None, "'score' is 4, not a number from 0 to 1"),
        ('{"pass": 1, "reason": "r"}', "stop", False, None, "its 'pass' is not a boolean: 1"),
        ('{"verdict": "yes"}', "stop", False, None, "its JSON object has no 'pass' (keys: verdict)"),
        ("yes, it holds", "stop", False, None, "no JSON object with pass/score/reason in it: 'yes, it holds'"),
        ("   ", "stop", False, None, "an empty reply"),
        ('{"pass": true, "reason": "long', "length", False, None, "cut off at the judge's completion cap"),
    ],
)
def test_read_verdict(content: str, finish: str, scored: bool, verdict: Verdict | None, problem: str | None) -> None:
    got, why = read_verdict(ChatResponse(content=content, finish_reason=finish), "s", scored=scored)
    assert got == verdict
    if problem is None:
        assert why is None
    else:
        assert why is not None and why.startswith(problem)
