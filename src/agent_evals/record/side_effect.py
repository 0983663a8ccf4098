"""One thing a conversation made in the system under test, undone after the case: the record's
``side_effects`` (standard library only).

The kind is the system's word for what it made: the portal's ``pull_request``, a repository's
``branch``, ``commit`` and ``file``. The core reads no kind: it keeps the list in order, once each,
and hands it to the system's pack (its undo, its checks). ``id`` is the system's id for the thing,
as text (a pull request's number, a branch's name, a commit's id, a file's path); ``url`` is where
a person sees it, when it has an address.

Its metadata form is ``{"kind": "pull_request", "id": "12", "url": "http://…/pullrequest/12"}``
(``url`` left out when empty).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_KIND = re.compile(r"[a-z][a-z0-9_]*")


class SideEffectFormatError(ValueError):
    """A serialized side effect is malformed (a record edited by hand, or another format)."""


@dataclass(frozen=True)
class SideEffect:
    """What the system made: ``kind`` (lower-case word), ``id`` (its id there), ``url`` ("" when none)."""

    kind: str
    id: str
    url: str = ""

    def __post_init__(self) -> None:
        if not _KIND.fullmatch(self.kind):
            raise SideEffectFormatError(f"a side effect's kind must be a lower-case word like 'pull_request', got {self.kind!r}")
        if not self.id:
            raise SideEffectFormatError(f"a side effect of kind {self.kind!r} needs an id")

    @property
    def key(self) -> tuple[str, str]:
        """What makes it one: its kind and id (the same thing found twice is listed once)."""
        return (self.kind, self.id)

    def describe(self) -> str:
        """``pull_request 12``, ``branch release/1.2``."""
        return f"{self.kind} {self.id}"

    def to_dict(self) -> dict[str, str]:
        out = {"kind": self.kind, "id": self.id}
        if self.url:
            out["url"] = self.url
        return out

    @classmethod
    def from_dict(cls, raw: Any, *, where: str = "side effect") -> SideEffect:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("kind"), str) or not isinstance(raw.get("id"), str):
            raise SideEffectFormatError(f"{where} must be {{kind, id, url?}} with text values, got {raw!r:.80}")
        url = raw.get("url", "")
        if not isinstance(url, str):
            raise SideEffectFormatError(f"{where}.url must be text, got {url!r:.40}")
        try:
            return cls(raw["kind"], raw["id"], url)
        except SideEffectFormatError as exc:
            raise SideEffectFormatError(f"{where}: {exc}") from None


__all__ = ["SideEffect", "SideEffectFormatError"]
