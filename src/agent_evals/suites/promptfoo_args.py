"""The ``promptfoo eval`` flags the runner passes through, read so the runner can act on them.

:func:`read_flags` reads the flags the kit needs to know about (``-j``, ``--repeat``, the
test filters, ``-o``) without consuming anything: every argument still goes to Promptfoo.
:func:`select` applies the filters to a suite's tests as Promptfoo does (metadata, then
pattern, then range, then first-n), so the runner can tell a filter that selects nothing
before any portal starts. Filters the kit cannot evaluate ahead (``--filter-failing``,
``--filter-sample``…) make the selection unknown (None), never wrong.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from agent_evals.suites.files import TestEntry

DEFAULT_CONCURRENCY = 4
_UNPREDICTABLE = ("--filter-failing", "--filter-failing-only", "--filter-errors-only", "--filter-sample",
                  "--filter-prompts", "--filter-providers", "--filter-targets")


class FlagError(ValueError):
    """A promptfoo flag the kit reads has a bad value."""


@dataclass(frozen=True)
class Flags:
    concurrency: int = DEFAULT_CONCURRENCY
    concurrency_given: bool = False
    repeat: int = 1
    metadata: tuple[tuple[str, str], ...] = ()
    pattern: str | None = None
    first_n: int | None = None
    range: tuple[int | None, int | None] | None = None
    unpredictable: tuple[str, ...] = ()
    outputs: tuple[str, ...] = field(default_factory=tuple)
    description: str | None = None
    table: bool | None = None

    @property
    def filtered(self) -> bool:
        return bool(self.metadata or self.pattern or self.first_n is not None or self.range or self.unpredictable)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line of ours, not argparse's usage
        raise FlagError(f"a promptfoo flag: {message.replace('argument ', '', 1)}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(add_help=False, allow_abbrev=False)
    parser.add_argument("-j", "--max-concurrency", dest="concurrency")
    parser.add_argument("--repeat")
    parser.add_argument("--filter-metadata", action="append", default=[])
    parser.add_argument("--filter-pattern")
    parser.add_argument("-n", "--filter-first-n", dest="first_n")
    parser.add_argument("--filter-range")
    parser.add_argument("-o", "--output", nargs="+", default=[])
    parser.add_argument("--description")
    parser.add_argument("--table", action="store_true", default=None)
    parser.add_argument("--no-table", dest="table", action="store_false")
    for flag in _UNPREDICTABLE:
        parser.add_argument(flag, dest=f"u_{flag}")
    return parser


def read_flags(args: Sequence[str]) -> Flags:
    """Read the flags; raises FlagError with one line naming the flag and what is allowed."""
    known, _ = _parser().parse_known_args(list(args))
    return Flags(
        concurrency=_positive(known.concurrency, "-j/--max-concurrency") or DEFAULT_CONCURRENCY,
        concurrency_given=known.concurrency is not None,
        repeat=_positive(known.repeat, "--repeat") or 1,
        metadata=tuple(_pair(item) for item in known.filter_metadata),
        pattern=_pattern(known.filter_pattern),
        first_n=_positive(known.first_n, "-n/--filter-first-n"),
        range=_range(known.filter_range),
        unpredictable=tuple(flag for flag in _UNPREDICTABLE if getattr(known, f"u_{flag}") is not None),
        outputs=tuple(known.output),
        description=known.description,
        table=known.table,
    )


def shared_output(flags: Flags, suites: Sequence[str]) -> str | None:
    """One line when an ``-o`` path without ``{suite}`` would be written by several suites (each is an
    eval of its own, so the file would keep the last suite's rows only); None when it cannot happen."""
    shared = [path for path in flags.outputs if "{suite}" not in path]
    if len(suites) < 2 or not shared:
        return None
    example = shared[0].rpartition("/")[0]
    suffix = shared[0].rpartition(".")[2] if "." in shared[0].rpartition("/")[2] else "json"
    return (f"-o {shared[0]} would be written by each of {len(suites)} suites ({', '.join(suites)}) and keep only the "
            f"last one's rows: put {{suite}} in the path, e.g. -o {example + '/' if example else ''}{{suite}}.{suffix}")


def _positive(value: str | None, flag: str) -> int | None:
    if value is None:
        return None
    if not value.strip().isdigit() or int(value) < 1:
        raise FlagError(f"{flag} must be a whole number of at least 1, got {value!r}")
    return int(value)


def _pair(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise FlagError(f"--filter-metadata takes key=value (e.g. priority=smoke), got {item!r}")
    return key, value


def _pattern(value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise FlagError(f"--filter-pattern {value!r} is not a regular expression: {exc}") from None
    return value


def _range(value: str | None) -> tuple[int | None, int | None] | None:
    if value is None:
        return None
    start, sep, end = value.partition(":")
    try:
        if not sep:
            raise ValueError
        return (int(start) if start else None, int(end) if end else None)
    except ValueError:
        raise FlagError(f"--filter-range takes start:end (e.g. 0:10, 10:, :10), got {value!r}") from None


def _metadata_matches(test: TestEntry, key: str, wanted: str) -> bool:
    value: Any = test.own_metadata.get(key)  # Promptfoo does not read defaultTest.metadata here
    values = value if isinstance(value, list) else [value]
    return any(v is not None and wanted in str(v) for v in values)  # a substring match, as Promptfoo's


def select(tests: Sequence[TestEntry], flags: Flags) -> list[TestEntry] | None:
    """The tests Promptfoo will run (before repeats), or None when the kit cannot tell ahead."""
    if flags.unpredictable:
        return None
    chosen = [t for t in tests if all(_metadata_matches(t, k, v) for k, v in flags.metadata)]
    if flags.pattern is not None:
        regex = re.compile(flags.pattern)
        chosen = [t for t in chosen if regex.search(t.description)]
    if flags.range is not None:
        start, end = flags.range
        chosen = chosen[start:end]
    if flags.first_n is not None:
        chosen = chosen[: flags.first_n]
    return chosen
