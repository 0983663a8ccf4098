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

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence

from agent_evals.suites.shard_spec import Shard, shard_path

REPLACED = ("--filter-pattern", "--filter-range", "-n", "--filter-first-n")
OUTPUT_FLAGS = ("-o", "--output")
# the flags with one value the kit drops or replaces when it runs a selection again
ONE_VALUE = frozenset((*REPLACED, "--repeat", "--description", "--filter-failing", "--filter-failing-only",
                       "--filter-errors-only", "--filter-sample", "--filter-metadata"))
DEFAULT_OUTPUT = "results/{suite}.json"
_SPECIAL = set("\\^$.*+?()[]{}|/")


def description_pattern(descriptions: Iterable[str]) -> str:
    """A pattern that matches exactly these descriptions, in JavaScript and Python alike."""
    escaped = ("".join("\\" + c if c in _SPECIAL else c for c in text) for text in dict.fromkeys(descriptions))
    return "^(?:" + "|".join(escaped) + ")$"


def shard_args(args: Sequence[str], pattern: str, shard: Shard) -> list[str]:
    """``args`` with the user's pattern, range and first-n replaced by ``pattern`` and every JSON
    output named for the shard (one added when there is none)."""
    out = rewrite_flags(args, REPLACED, lambda values: [shard_path(v, shard) if v.endswith(".json") else v
                                                         for v in values])
    if not json_outputs(args):
        out += ["-o", shard_path(DEFAULT_OUTPUT, shard)]
    return [*out, "--filter-pattern", pattern]


def json_outputs(args: Sequence[str]) -> list[str]:
    """The ``.json`` paths of the ``-o`` flags in ``args``."""
    return [v for name, values, _ in _flags(args) if name in OUTPUT_FLAGS for v in values if v.endswith(".json")]


def rewrite_flags(
    args: Sequence[str], dropped: Collection[str], outputs: Callable[[list[str]], list[str]] | None = None
) -> list[str]:
    """``args`` without the flags ``dropped`` and their values; with ``outputs``, each ``-o``'s
    paths replaced by what it gives for them (in place, as ``-o …``)."""
    out: list[str] = []
    for name, values, tokens in _flags(args):
        if name in dropped:
            continue
        out += ["-o", *outputs(values)] if outputs is not None and name in OUTPUT_FLAGS else tokens
    return out


def _flags(args: Sequence[str]) -> Iterator[tuple[str, list[str], list[str]]]:
    """Each argument with its values: ``(name, values, tokens)``. An output flag (``-o``) takes
    every value up to the next flag, ``--name=value`` its one value; a flag the kit rewrites
    (filters, ``--repeat``, ``--description``) the next argument; anything else stands alone."""
    tokens = list(args)
    i = 0
    while i < len(tokens):
        name, eq, value = tokens[i].partition("=")
        start = i
        i += 1
        if eq:
            values = [value]
        elif name in OUTPUT_FLAGS:
            values = []
            while i < len(tokens) and not tokens[i].startswith("-"):
                values.append(tokens[i])
                i += 1
        elif name in ONE_VALUE and i < len(tokens):
            values = [tokens[i]]
            i += 1
        else:
            values = []
        yield name, values, tokens[start:i]
