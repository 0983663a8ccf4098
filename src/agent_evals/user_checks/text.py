"""Small text helpers the user checks share (pure, standard library only)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from functools import lru_cache

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z][a-z'’]*")
_SQUASH = re.compile(r"[^a-z0-9]+")
_SPACES = re.compile(r"\s+")

#: Words that carry no topic: function words, courtesy, chat filler (compared after :func:`stem`).
STOP_WORDS = frozenset("""
a about above after again all also am an and any are as at be because been before being both but by can
could did do does doing done down during each few for from further had has have having he her here hers
him his how i if in into is it its itself just let like me more most my myself no nor not now of off on
once only or other our ours out over own same she should so some such than that the their theirs them
then there these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yes yeah yep okay ok sure right fine good
great perfect thanks thank please sorry hello hi hey dear cheer cheers awesome wonderful lovely nice cool
really much many lot lots very quite bit little well still already maybe need want would like get got
make made go going know knew think thought say said tell told ask asked help helpful appreciate
appreciated understand understood see look looks sound sounds way thing things something anything
everything nothing today tomorrow now later soon again one two also let's that's it's i'm i've i'll
don't can't won't doesn't isn't didn't
""".split())


def sentences(text: str) -> list[str]:
    """The sentences (and lines) of ``text``, stripped, without empty ones."""
    return [part.strip() for part in _SENTENCE_END.split(text or "") if part.strip()]


def squashed(text: str) -> str:
    """Lowercase letters and digits only: ``West Europe`` and ``westeurope`` are the same."""
    return _SQUASH.sub("", (text or "").lower())


def normalized(text: str) -> str:
    """Lowercase, one space between words, no punctuation at the ends."""
    return " ".join((text or "").lower().split()).strip(" .,!?;:-'\"")


def words(text: str) -> list[str]:
    return _WORD.findall((text or "").lower())


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A crude stem, enough to match ``networks`` with ``network`` and ``copied`` with ``copy``."""
    for suffix, keep in (("ies", "y"), ("ied", "y"), ("ing", ""), ("es", ""), ("ed", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + keep
    return word


def content_words(text: str) -> set[str]:
    """The stems of the words of ``text`` that say what it is about (4 letters or more, not stop words)."""
    return {stem(w) for w in words(text) if len(w) >= 4 and w not in STOP_WORDS and stem(w) not in STOP_WORDS}


def similarity(a: str, b: str) -> float:
    """Share of word pairs (bigrams) the two texts have in common, over the smaller text's (0 to 1)."""
    pa, pb = _pairs(a), _pairs(b)
    if not pa or not pb:
        return 1.0 if normalized(a) == normalized(b) else 0.0
    return len(pa & pb) / min(len(pa), len(pb))


def _pairs(text: str) -> set[tuple[str, str]]:
    found = words(text)
    return set(zip(found, found[1:], strict=False))


def quoted(text: str, limit: int = 70) -> str:
    """``'Shall I open the pull request?'``: one line, cut with an ellipsis."""
    line = _SPACES.sub(" ", text or "").strip()
    return repr(line if len(line) <= limit else line[: limit - 1] + "…")


def any_match(patterns: Iterable[re.Pattern[str]], text: str) -> re.Match[str] | None:
    for pattern in patterns:
        if (found := pattern.search(text)) is not None:
            return found
    return None


def plain(text: str | None) -> str:
    """The message as a person reads it: HTML character references (``you&#39;re``, which some
    servers' chat templates leave) read as their characters."""
    text = text or ""
    return html.unescape(text) if "&" in text else text
