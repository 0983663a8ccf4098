"""``expected_statements``: short statements that must hold of the conversation (or of the
final answer), each judged alone by the judge model: yes or no, with a one-sentence reason.

Config: ``statements`` (a non-empty list of short statements), ``about`` (``conversation``,
the default: the whole transcript with its tool lines; ``final_reply``: the assistant's last
answer, with the user's messages as context), ``threshold`` (0 to 1, default 1: every
statement must hold). The score is the share of statements that hold; the check passes when
it reaches the threshold. A rephrased answer still passes; a missing fact fails alone and is
named.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from agent_evals.assertions._config import ConfigReader
from agent_evals.assertions._context import grader
from agent_evals.assertions._judged import judged, judged_by
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.record import Judgement

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

NAME = "expected_statements"
About = Literal["conversation", "final_reply"]
ABOUT: tuple[About, ...] = get_args(About)


@dataclass(frozen=True)
class ExpectedStatementsConfig:
    statements: tuple[str, ...]
    about: About = "conversation"
    threshold: float = 1.0


def parse_config(raw: Any) -> ExpectedStatementsConfig:
    """Read and check the config (raises ConfigError; an empty statement list is one)."""
    reader = ConfigReader(raw, ("statements", "about", "threshold"))
    return ExpectedStatementsConfig(
        statements=reader.string_list("statements", required=True, allow_empty=False, what="a list of short statements"),
        about=reader.choice("about", ABOUT, "conversation"),
        threshold=reader.number("threshold", minimum=0.0, maximum=1.0, default=1.0),
    )


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    cfg = parse_config(config)
    found = judged(NAME, config, metadata)
    if not isinstance(found, Judgement):
        return found
    held = [v for v in found.verdicts if v.passed]
    score = len(held) / len(found.verdicts)
    passed = score >= cfg.threshold
    need = "all" if cfg.threshold >= 1.0 else f"threshold {cfg.threshold:.2f}"
    lines = [f"  {'yes' if v.passed else 'NO '} {v.question!r}: {v.reason}" for v in found.verdicts]
    head = f"{NAME}: {len(held)} of {len(found.verdicts)} statement(s) hold ({need}){judged_by(found)}"
    return make_result(passed, "\n".join([head, *lines]), score=score)
