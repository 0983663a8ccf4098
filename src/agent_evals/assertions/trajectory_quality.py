"""``trajectory_quality``: the judge model compares the agent's actual route through the tools
with the expected one, and explains where they differ.

Config: ``expected`` (the expected steps, tool names or short phrases, in order; left out, the
judge weighs the route on its own: the calls the user's requests needed, without needless,
repeated or harmful ones, as a live policy asks of real conversations), ``notes`` (optional:
what matters for this route, e.g. "the schema is read before anything is submitted"). The score is the judge's (0 to 1); the check passes when the judge
finds the route acceptable (Promptfoo's ``threshold:`` on the assertion can ask for a
score too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_evals.assertions._config import ConfigReader
from agent_evals.assertions._context import grader
from agent_evals.assertions._judged import judged, judged_by
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.record import Judgement
from agent_evals.assertions._run import read_record

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

NAME = "trajectory_quality"


@dataclass(frozen=True)
class TrajectoryQualityConfig:
    expected: tuple[str, ...]
    notes: str | None = None


def parse_config(raw: Any) -> TrajectoryQualityConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("expected", "notes"))
    return TrajectoryQualityConfig(
        expected=reader.string_list("expected", required=False, allow_empty=False, what="a list of expected steps"),
        notes=reader.string("notes", what="a short note, as text") if reader.has("notes") else None,
    )


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    cfg = parse_config(config)
    found = judged(NAME, config, metadata)
    if not isinstance(found, Judgement):
        return found
    verdict = found.verdicts[0]
    score = verdict.score if verdict.score is not None else (1.0 if verdict.passed else 0.0)
    actual = ", ".join(c.name for c in read_record(metadata).tool_calls) or "no calls"
    word = "acceptable" if verdict.passed else "not acceptable"
    expected = f"expected {' → '.join(cfg.expected)}" if cfg.expected else "no expected route"
    reason = f"{NAME}: route {word}, score {score:.2f}: {verdict.reason} ({expected}; actual {actual}){judged_by(found)}"
    return make_result(verdict.passed, reason, score=score)
