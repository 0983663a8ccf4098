"""``reply_contains``: the agent's answer states the key facts (words or phrases), read from the
answer alone — never from the question, the tool results or the tool lines of the output.

Config: ``all`` (list of phrases that must all appear), ``any`` (list of which at least one
must appear; give ``all``, ``any`` or both), ``ignore_case`` (default true), ``reply``
(``final`` default: the last reply; ``any``: any reply of the conversation). The score is the
share of ``all`` found (1 when only ``any`` is given and one is found).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from agent_evals.assertions._config import ConfigError, ConfigReader
from agent_evals.assertions._context import grader
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.assertions._run import read_record

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

NAME = "reply_contains"
Which = Literal["final", "any"]
WHICH: tuple[Which, ...] = get_args(Which)


@dataclass(frozen=True)
class ReplyContainsConfig:
    all: tuple[str, ...] = ()
    any: tuple[str, ...] = ()
    ignore_case: bool = True
    reply: Which = "final"


def parse_config(raw: Any) -> ReplyContainsConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("all", "any", "ignore_case", "reply"))
    what = "a list of words or phrases"
    cfg = ReplyContainsConfig(
        all=reader.string_list("all", required=False, what=what),
        any=reader.string_list("any", required=False, what=what),
        ignore_case=reader.boolean("ignore_case", True),
        reply=reader.choice("reply", WHICH, "final"),
    )
    if not cfg.all and not cfg.any:
        raise ConfigError("give config.all (every phrase must appear) or config.any (one must appear), or both")
    return cfg


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    cfg = parse_config(config)
    run = read_record(metadata)
    text = run.final_reply if cfg.reply == "final" else "\n".join(run.assistant_texts())
    found = [p for p in cfg.all if _contains(text, p, cfg.ignore_case)]
    missing = [p for p in cfg.all if p not in found]
    any_found = [p for p in cfg.any if _contains(text, p, cfg.ignore_case)]
    where = "the final reply" if cfg.reply == "final" else "the agent's replies"
    problems = []
    if missing:
        problems.append(f"missing {', '.join(map(repr, missing))} in {where}")
    if cfg.any and not any_found:
        problems.append(f"none of {', '.join(map(repr, cfg.any))} in {where}")
    score = len(found) / len(cfg.all) if cfg.all else (1.0 if any_found else 0.0)
    shown = ", ".join(map(repr, found + any_found)) or "none"
    if problems:
        return make_result(False, f"{NAME}: " + "; ".join(problems) + f" (found: {shown})", score=score)
    return make_result(True, f"{NAME}: {where} states {shown}", score=score)


def _contains(text: str, phrase: str, ignore_case: bool) -> bool:
    return phrase.lower() in text.lower() if ignore_case else phrase in text
