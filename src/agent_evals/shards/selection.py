"""A shard's tests, selected by Promptfoo: ``promptfoo eval`` flags that run exactly them.

Promptfoo runs the tests whose description matches ``--filter-pattern`` (a JavaScript regular
expression, tested against the whole description here: ``^(?:…|…)$`` of the escaped
descriptions). The kit already applied the user's own pattern, range and first-n to compute the
selection, so those flags are replaced by the shard's pattern; ``--filter-metadata`` stays (the
shard's tests match it anyway). Each JSON output is renamed for the shard
(``x.json`` → ``x.shard-2-of-4.json``), and without one the shard writes
``results/{suite}.shard-2-of-4.json``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agent_evals.shards.spec import Shard, shard_path

REPLACED = ("--filter-pattern", "--filter-range", "-n", "--filter-first-n")
OUTPUT_FLAGS = ("-o", "--output")
DEFAULT_OUTPUT = "results/{suite}.json"
_SPECIAL = set("\\^$.*+?()[]{}|/")


def description_pattern(descriptions: Iterable[str]) -> str:
    """A pattern that matches exactly these descriptions, in JavaScript and Python alike."""
    escaped = ("".join("\\" + c if c in _SPECIAL else c for c in text) for text in dict.fromkeys(descriptions))
    return "^(?:" + "|".join(escaped) + ")$"


def shard_args(args: Sequence[str], pattern: str, shard: Shard) -> list[str]:
    """``args`` with the user's pattern, range and first-n replaced by ``pattern`` and every JSON
    output named for the shard (one added when there is none)."""
    out: list[str] = []
    has_json = False
    tokens = list(args)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name, eq, _ = token.partition("=")
        if name in REPLACED:
            i += 1 if eq else 2
            continue
        if name in OUTPUT_FLAGS:
            values = [token.partition("=")[2]] if eq else []
            i += 1
            if not eq:
                while i < len(tokens) and not tokens[i].startswith("-"):
                    values.append(tokens[i])
                    i += 1
            renamed = [shard_path(v, shard) if v.endswith(".json") else v for v in values]
            has_json = has_json or any(v.endswith(".json") for v in values)
            out += ["-o", *renamed]
            continue
        out.append(token)
        i += 1
    if not has_json:
        out += ["-o", shard_path(DEFAULT_OUTPUT, shard)]
    return [*out, "--filter-pattern", pattern]


def json_outputs(args: Sequence[str]) -> list[str]:
    """The ``.json`` paths of the ``-o`` flags in ``args``."""
    found: list[str] = []
    tokens = list(args)
    for i, token in enumerate(tokens):
        name, eq, value = token.partition("=")
        if name not in OUTPUT_FLAGS:
            continue
        values = [value] if eq else []
        j = i + 1
        while not eq and j < len(tokens) and not tokens[j].startswith("-"):
            values.append(tokens[j])
            j += 1
        found += [v for v in values if v.endswith(".json")]
    return found
