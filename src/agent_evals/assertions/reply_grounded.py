"""``reply_grounded``: every value of the given kinds in the agent's answer comes from the
conversation — what a tool returned or what the user said — so a read-only agent that invents an
address, a link or a number is caught without a model.

Config: ``kinds`` (list of ``cidr``, ``ip``, ``url``, ``email``, ``number``; default ``[cidr, ip,
url, email]``), ``patterns`` (more regular expressions: each match counts as a value), ``reply``
(``final`` default, or ``any``: every reply), ``ignore`` (values never checked, e.g. an address
from the agent's instructions). The score is the share of the answer's values that are grounded
(1 when it states none).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal, get_args

from agent_evals.assertions._config import ConfigError, ConfigReader
from agent_evals.assertions._context import grader
from agent_evals.assertions._result import GradingResult, make_result
from agent_evals.assertions._run import read_record

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

NAME = "reply_grounded"
Kind = Literal["cidr", "ip", "url", "email", "number"]
KINDS: tuple[Kind, ...] = get_args(Kind)
DEFAULT_KINDS: tuple[Kind, ...] = ("cidr", "ip", "url", "email")
Which = Literal["final", "any"]
WHICH: tuple[Which, ...] = get_args(Which)

_OCTET = r"(?:25[0-5]|2[0-4]\d|1?\d?\d)"
_IP = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
PATTERNS: dict[Kind, str] = {
    "cidr": rf"(?<![\d.]){_IP}/(?:3[0-2]|[12]?\d)(?!\d)",
    "ip": rf"(?<![\d.]){_IP}(?![\d/]|\.\d)",
    "url": r"https?://[^\s<>()\[\]{}\"'`|*]+",
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    "number": r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\d)",
}
_TRAILING = ".,;:!?"
_WIDEST_FIRST: tuple[Kind, ...] = ("url", "email", "cidr", "ip", "number")


@dataclass(frozen=True)
class ReplyGroundedConfig:
    kinds: tuple[str, ...] = DEFAULT_KINDS
    patterns: tuple[str, ...] = ()
    reply: Which = "final"
    ignore: tuple[str, ...] = ()


def parse_config(raw: Any) -> ReplyGroundedConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("kinds", "patterns", "reply", "ignore"))
    kinds = reader.string_list("kinds", required=False, what=f"a list of {', '.join(KINDS)}") or DEFAULT_KINDS
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ConfigError(f"config.kinds: unknown kind {', '.join(map(repr, unknown))}; allowed: {', '.join(KINDS)}")
    patterns = reader.string_list("patterns", required=False, what="a list of regular expressions")
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"config.patterns: {pattern!r} is not a regular expression: {exc}") from None
    return ReplyGroundedConfig(
        kinds=tuple(kinds), patterns=patterns, reply=reader.choice("reply", WHICH, "final"),
        ignore=reader.string_list("ignore", required=False, what="a list of values"),
    )


def values_in(text: str, cfg: ReplyGroundedConfig) -> list[str]:
    """The values of the configured kinds in ``text``, in order, each once (a CIDR's address is not
    counted again as an ip, nor a URL's parts)."""
    found: list[str] = []
    taken: list[tuple[int, int]] = []
    kinds = [k for k in _WIDEST_FIRST if k in cfg.kinds]  # a URL's host is not an ip of its own
    for pattern in [PATTERNS[k] for k in kinds] + list(cfg.patterns):
        for match in re.finditer(pattern, text):
            value = match.group(0).rstrip(_TRAILING)
            start, end = match.start(), match.start() + len(value)
            if not value or any(s <= start and end <= e for s, e in taken):
                continue
            taken.append((start, end))
            if value not in found and value not in cfg.ignore:
                found.append(value)
    return found


def _sources(run: Any) -> str:
    """What the agent was told: every tool result and every user message, as one text."""
    parts = [json.dumps(call.result, ensure_ascii=False) if not isinstance(call.result, str) else call.result
             for call in run.tool_calls]
    parts += [turn.user for turn in run.turns]
    if run.pending is not None:
        parts.append(run.pending.user)
    return "\n".join(parts).lower()


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    cfg = parse_config(config)
    run = read_record(metadata)
    text = run.final_reply if cfg.reply == "final" else "\n".join(run.assistant_texts())
    values = values_in(text, cfg)
    sources = _sources(run)
    invented = [v for v in values if v.lower() not in sources]
    where = "the final reply" if cfg.reply == "final" else "the agent's replies"
    if not values:
        return make_result(True, f"{NAME}: {where} states no {', '.join(cfg.kinds)} value to check")
    score = (len(values) - len(invented)) / len(values)
    if invented:
        return make_result(
            False,
            f"{NAME}: {where} states {', '.join(map(repr, invented))}, which no tool returned and the user never said "
            f"({len(values) - len(invented)} of {len(values)} value(s) grounded)",
            score=score,
        )
    return make_result(True, f"{NAME}: all {len(values)} value(s) in {where} come from the tools or the user", score=score)
