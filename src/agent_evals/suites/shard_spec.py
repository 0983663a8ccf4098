"""Which part of a run a machine takes: :class:`Shard` ``I/N`` (shard I of N, numbered from 1).

``parse_shard("2/4")`` gives shard 2 of 4; a bad value raises :class:`ShardError` with one line
saying what is wrong and what is allowed. :func:`shard_path` names a results file for its shard
(``results/tickets-create.json`` → ``results/tickets-create.shard-2-of-4.json``), so shards of one
run never overwrite each other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
MAX_SHARDS = 1000


class ShardError(ValueError):
    """A ``--shard`` value, a shard plan or a set of shard files that cannot be used (one line)."""


@dataclass(frozen=True, order=True)
class Shard:
    index: int  # 1-based
    total: int

    def __post_init__(self) -> None:
        if not 1 <= self.total <= MAX_SHARDS:
            raise ShardError(f"--shard {self}: the shard count must be from 1 to {MAX_SHARDS}")
        if self.index < 1:
            raise ShardError(f"--shard {self}: shards are numbered from 1 (1/{self.total} to {self.total}/{self.total})")
        if self.index > self.total:
            raise ShardError(
                f"--shard {self}: shard {self.index} is above the shard count {self.total} "
                f"(shards are numbered 1 to {self.total})"
            )

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"

    @property
    def name(self) -> str:
        """``shard-2-of-4``: in file and folder names."""
        return f"shard-{self.index}-of-{self.total}"


def parse_shard(text: str) -> Shard:
    """``"2/4"`` → ``Shard(2, 4)``; anything else raises :class:`ShardError`."""
    match = _SPEC.match(text or "")
    if match is None:
        raise ShardError(f"--shard {text!r}: expected I/N, e.g. 2/4 (shard 2 of 4)")
    return Shard(int(match.group(1)), int(match.group(2)))


def shard_path(path: str, shard: Shard) -> str:
    """``out/x.json`` → ``out/x.shard-2-of-4.json`` (the suffix kept; none: appended)."""
    return tagged_path(path, shard.name)


def tagged_path(path: str, tag: str) -> str:
    """``out/x.json`` → ``out/x.<tag>.json`` (the suffix kept; none: appended)."""
    folder, _, name = path.rpartition("/")
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem:
        stem, suffix = name, ""
    renamed = f"{stem}.{tag}" + (f".{suffix}" if suffix else "")
    return f"{folder}/{renamed}" if folder else renamed
