"""``repeated_calls``: no loop: the same tool is not called with the same arguments again and again.

Config (all optional): ``max_repeats`` (int >= 1, default 2: a call with the same tool and
arguments may happen twice, e.g. once more after an error; a third is a loop), ``ignore``
(tools or globs never counted, e.g. a search the agent may repeat). Arguments compare as
parsed JSON (a call whose arguments were not a JSON object compares by its text). Needs no
reference case, so a live policy can use it.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from agent_evals.assertions._config import ConfigReader
from agent_evals.assertions._context import grader
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.assertions._run import read_record
from agent_evals.assertions.names import first_match
from agent_evals.assertions.values import render

NAME = "repeated_calls"
VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)


@dataclass(frozen=True)
class RepeatedCallsConfig:
    max_repeats: int = 2
    ignore: tuple[str, ...] = ()


def parse_config(raw: Any) -> RepeatedCallsConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("max_repeats", "ignore"))
    return RepeatedCallsConfig(
        max_repeats=reader.integer("max_repeats", minimum=1, default=2) or 2,
        ignore=reader.string_list("ignore", required=False),
    )


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    cfg = parse_config(config)
    calls = [c for c in read_record(metadata).tool_calls if first_match(c.name, cfg.ignore) is None]
    keys = Counter(
        (c.name, json.dumps(c.arguments, sort_keys=True) if c.arguments is not None else c.raw_arguments) for c in calls
    )
    loops = [(name, args, n) for (name, args), n in keys.items() if n > cfg.max_repeats]
    if loops:
        shown = "; ".join(f"{name}({render(json.loads(args) if args.startswith('{') else args, limit=60)}) ×{n}"
                          for name, args, n in loops)
        return make_result(False, f"{NAME}: called again and again with the same arguments: {shown} "
                                  f"(at most {cfg.max_repeats} allowed)")
    return make_result(True, f"{NAME}: no call repeated more than {cfg.max_repeats} time(s) ({len(calls)} call(s))")
