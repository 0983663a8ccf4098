"""The values a message states, by kind, and whether another text states them too (pure).

A *value* is what a user can invent: a name (``crm-dev-weu``, ``westus9``, ``CC-2310``), an
address range, an IP or e-mail address, a link, an ID, a number of two digits or more, a time,
and the domain's own kinds (a pack's ``UserFraming.values``: regions, queues, …). Plain words
are not values: "West Europe" is one only when the pack names regions.

:class:`Vocabulary` finds them (earlier kinds first; a span is taken once, so the ``22`` of
``10.20.32.0/22`` is no number of its own) and :class:`Grounds` says whether a value was
stated in a text (the brief, the assistant's replies), each kind compared its own way.
"""

from __future__ import annotations

import html
import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent_evals.user_checks.text import squashed

_HYPHEN_WORDS = frozenset({"to", "of", "the", "by", "and", "in", "on", "a", "an", "for", "at", "or", "up", "out",
                           "per", "from", "with", "as", "you", "it", "over", "off", "be", "all"})
_BUILT_IN: tuple[tuple[str, str], ...] = (
    ("link", r"\bhttps?://[^\s<>\"'`)\]]+[^\s<>\"'`)\].,;:!?]"),
    ("e-mail address", r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),
    ("address range", r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}/\d{1,2}\b"),
    ("IP address", r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w.]*\d)"),
    ("time", r"\b\d{1,2}:\d{2}\b"),
)
_LATE: tuple[tuple[str, str], ...] = (  # after the pack's kinds
    ("ID", r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    ("name", r"(?<![\w.@/-])[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)+(?![\w@/-]|\.\w)"),
    ("name", r"(?<![\w.@/-])[A-Za-z]+\d+[A-Za-z0-9]*(?![\w@/-])"),
    ("number", r"(?<![\w.,/:-])\d{2,}(?:[.,]\d+)?(?![\w/:-]|[.,]\d)"),
)


@dataclass(frozen=True)
class Value:
    kind: str  # "name", "address range", a pack's "region", …
    text: str  # as the message wrote it

    def describe(self) -> str:
        return f"{self.kind} {self.text!r}"


class Vocabulary:
    """The kinds of value to look for: the kit's and a pack's (``(kind, regular expression)``)."""

    def __init__(self, extra: Sequence[tuple[str, str]] = ()) -> None:
        kinds = [*_BUILT_IN, *extra, *_LATE]
        self._patterns = [(kind, re.compile(pattern, re.IGNORECASE if (kind, pattern) in extra else 0))
                          for kind, pattern in kinds]

    def values(self, text: str) -> list[Value]:
        """The values ``text`` states, in order of appearance (HTML character references read as
        the characters they stand for: ``you&#39;re`` states no number)."""
        text = html.unescape(text) if "&" in (text or "") else text
        taken: list[tuple[int, int]] = []
        found: list[tuple[int, Value]] = []
        for kind, pattern in self._patterns:
            for match in pattern.finditer(text or ""):
                start, end = match.span()
                if any(start < b and a < end for a, b in taken):
                    continue
                value = Value(kind, match.group(0))
                if kind == "name" and not _is_name(value.text):
                    continue
                taken.append((start, end))
                found.append((start, value))
        return [value for _, value in sorted(found, key=lambda item: item[0])]


def _is_name(text: str) -> bool:
    """``crm-dev-weu``, ``westus9``, ``CC-2310``, ``snake_case``, ``a.b.example`` — not ``e-mail``,
    ``up-to-date`` or ``e.g``."""
    parts = re.split(r"[-_.]", text)
    if any(c.isdigit() for c in text) and any(c.isalpha() for c in text):
        return True
    if "_" in text:
        return True
    return len(parts) >= 3 and not any(p.lower() in _HYPHEN_WORDS for p in parts)


class Grounds:
    """What a set of texts states (the brief, the assistant's replies so far), to ground values in.

    Cheap to fill (a reply is kept as text, its tokens and numbers); each value is looked up its
    kind's way: links, e-mail addresses, IDs, times and addresses as written (an address may be
    written in another form), numbers by value, names as a whole token, a pack's kinds squashed
    (``West Europe`` is ``westeurope``)."""

    def __init__(self) -> None:
        self._pending: list[str] = []  # read when a value is not found in what was read so far
        self._lower: list[str] = []
        self._squashed: list[str] = []
        self._tokens: set[str] = set()
        self._numbers: set[int] = set()

    def add(self, text: str) -> None:
        if text:
            self._pending.append(text)

    def has(self, value: Value) -> bool:
        """Was ``value`` stated in one of the texts?"""
        if self._found(value):
            return True
        if not self._pending:
            return False
        for text in self._pending:
            self._read(text)
        self._pending.clear()
        return self._found(value)

    def _read(self, text: str) -> None:
        self._lower.append(text.lower())
        self._squashed.append(squashed(text))
        self._tokens.update(_squash_token(t) for t in _TOKEN.findall(text))
        self._numbers.update(int(n) for n in _DIGITS.findall(text) if len(n) < 18)

    def _found(self, value: Value) -> bool:
        written = value.text.lower()
        if value.kind == "number":
            return _number(value.text) in self._numbers
        if value.kind == "name":
            return squashed(value.text) in self._tokens
        if value.kind in ("link", "e-mail address", "ID", "time", "address range", "IP address"):
            if value.kind in ("address range", "IP address"):
                written = _address(value.text)
            pattern = re.compile(rf"(?<![\w.]){re.escape(written)}(?![\w/]|\.\w)")
            return any(written in text and pattern.search(text) for text in self._lower)
        key = squashed(value.text)  # a pack's kind
        return any(key in text for text in self._squashed)


def _squash_token(token: str) -> str:
    """:func:`squashed` of a token (letters, digits and ``._@-``), without a regular expression."""
    return token.lower().replace("-", "").replace(".", "").replace("_", "").replace("@", "")


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]*[A-Za-z0-9]|\w")
_DIGITS = re.compile(r"\d+")


def _address(text: str) -> str:
    try:
        # one form, as written (10.20.33.0/22 is not 10.20.32.0/22)
        return str(ipaddress.ip_interface(text)) if "/" in text else str(ipaddress.ip_address(text))
    except ValueError:
        return text


def _number(text: str) -> int | None:
    digits = re.split(r"[.,]", text)[0]
    return int(digits) if digits.isdigit() else None
