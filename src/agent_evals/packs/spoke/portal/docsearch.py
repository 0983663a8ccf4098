"""The portal's documentation (markdown shipped in ``portal/docs``) and a keyword search.

Ranking is deterministic and explainable, no ML: query words are lower-cased, stop
words dropped and plurals folded; each document scores BM25-style term frequency
times inverse document frequency, with a bonus for words in the title. Ties are
broken by document id. The snippet is the paragraph matching the most query words.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from importlib import resources

from agent_evals.packs.spoke.portal.errors import InvalidInputError, NotFoundError
from agent_evals.packs.spoke.portal.models import DocHit, DocPage

_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = (
    "a an and are as at be by can do does for from how i if in into is it its my of on or so that "
    "the their then there these this to we what when where which who why will with you your"
)
_STOP = frozenset(_STOP_WORDS.split())
_K1 = 1.2
_SNIPPET = 240
MAX_LIMIT = 20


def words(text: str) -> list[str]:
    """Search terms of ``text``: lower-case, no stop words, simple plural folding."""
    return [_fold(w) for w in _WORD.findall(text.lower()) if w not in _STOP and (len(w) > 1 or w.isdigit())]


def _fold(word: str) -> str:
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@dataclass(frozen=True)
class Doc:
    id: str
    title: str
    content: str
    terms: Counter[str]
    title_terms: frozenset[str]
    paragraphs: tuple[str, ...]


def parse_doc(doc_id: str, content: str) -> Doc:
    title_match = re.search(r"^#\s+(.+)$", content, flags=re.MULTILINE)
    title = title_match.group(1).strip() if title_match else doc_id
    return Doc(
        id=doc_id,
        title=title,
        content=content,
        terms=Counter(words(content)),
        title_terms=frozenset(words(title)),
        paragraphs=_paragraphs(content),
    )


def _paragraphs(content: str) -> tuple[str, ...]:
    """Blank-line separated blocks; a heading is joined to the block under it."""
    blocks = [b.strip() for b in re.split(r"\n\s*\n", content) if b.strip() and not b.startswith("# ")]
    merged: list[str] = []
    for block in blocks:
        if merged and merged[-1].startswith("#") and "\n" not in merged[-1]:
            merged[-1] = f"{merged[-1]}: {block}"
        else:
            merged.append(block)
    return tuple(merged)


class DocIndex:
    def __init__(self, docs: list[Doc]) -> None:
        self.docs = {doc.id: doc for doc in sorted(docs, key=lambda d: d.id)}
        self._df = Counter(term for doc in docs for term in doc.terms)
        self._avg_len = sum(sum(d.terms.values()) for d in docs) / max(len(docs), 1)

    @classmethod
    def load(cls) -> DocIndex:
        root = resources.files("agent_evals.packs.spoke.portal").joinpath("docs")
        docs = [
            parse_doc(entry.name[:-3], entry.read_text(encoding="utf-8"))
            for entry in root.iterdir()
            if entry.name.endswith(".md")
        ]
        return cls(docs)

    def get(self, doc_id: str) -> DocPage:
        doc = self.docs.get(doc_id)
        if doc is None:
            raise NotFoundError(f"unknown document {doc_id!r}; available: {', '.join(self.docs)}")
        return DocPage(id=doc.id, title=doc.title, content=doc.content)

    def search(self, query: str, limit: int = 5) -> list[DocHit]:
        terms = list(dict.fromkeys(words(query)))
        if not terms:
            raise InvalidInputError("the search query has no searchable words; try e.g. 'private link prod'")
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInputError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
        scored = [(self._score(doc, terms), doc) for doc in self.docs.values()]
        ranked = sorted(((s, d) for s, d in scored if s > 0), key=lambda sd: (-sd[0], sd[1].id))
        return [
            DocHit(id=d.id, title=d.title, snippet=_snippet(d, terms), score=round(s, 3))
            for s, d in ranked[:limit]
        ]

    def _score(self, doc: Doc, terms: list[str]) -> float:
        length = sum(doc.terms.values())
        score = 0.0
        for term in terms:
            tf = doc.terms.get(term, 0)
            if not tf:
                continue
            idf = math.log(1 + (len(self.docs) - self._df[term] + 0.5) / (self._df[term] + 0.5))
            norm = tf * (_K1 + 1) / (tf + _K1 * (0.25 + 0.75 * length / self._avg_len))
            score += idf * (norm + (1.0 if term in doc.title_terms else 0.0))
        return score


def _snippet(doc: Doc, terms: list[str]) -> str:
    wanted = set(terms)

    def match(paragraph: str) -> tuple[int, int]:
        found = [w for w in words(paragraph) if w in wanted]
        return len(set(found)), len(found)

    best = max(doc.paragraphs, key=match, default=doc.title)
    text = re.sub(r"^#+\s*|`|\*\*", "", best, flags=re.MULTILINE).replace("|", " ")
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= _SNIPPET:
        return text
    first = min((m.start() for t in terms for m in [re.search(re.escape(t), text.lower())] if m), default=0)
    start = max(0, min(first - 60, len(text) - _SNIPPET))
    if start:
        start = text.find(" ", start) + 1 or start  # begin at a word
    end = text.rfind(" ", start, start + _SNIPPET)
    end = end if end > start else start + _SNIPPET
    return ("..." if start else "") + text[start:end].strip() + ("..." if end < len(text) else "")
