"""Where ``agent-evals live`` reads conversations: the portal (paged REST with its token) or files.

* **Portal**: ``GET /api/conversations`` with the window, agents and sampling options; the
  portal selects (:mod:`agent_evals.live.sampling`) and the pages are read one after the other,
  so a sample of thousands never sits in memory at once.
* **Files** (``.jsonl``, one JSON document per line): conversations in the portal's form, the
  kit's run records (the ``agent_evals`` marker; a top-level ``created_at`` may date them), or
  OTLP/JSON traces in the GenAI conventions (:mod:`agent_evals.live.otlp_import`). A line that
  is none of these, or is corrupt, is one warning naming the file and the line; the rest is
  still read. Files are read twice: once for what sampling needs, once for the sample.

Either way a conversation is a :class:`~agent_evals.live.stored.StoredConversation`.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_evals.live.otlp_import import conversations_from_spans, spans_of
from agent_evals.live.sampling import SampleSpec, select
from agent_evals.live.store import Candidate
from agent_evals.live.stored import StoredConversation, conversation_from_dict, parse_time
from agent_evals.record import MARKER, KitError, RecordError, RunRecord, check_marker

PAGE = 100
TIMEOUT_S = 60.0


class SourceError(KitError):
    """The conversations cannot be read: the portal is down or refuses, a file is missing (kind ``system``)."""

    kind = "system"


@dataclass(frozen=True)
class Window:
    since: float
    until: float

    def contains(self, moment: float) -> bool:
        return self.since <= moment < self.until

    def describe(self) -> str:
        if self.since <= 0 and self.until >= 1e11:
            return "all time"
        return f"{_day_time(self.since)} → {_day_time(self.until)} UTC"


ALL_TIME = Window(0.0, 1e12)


def _day_time(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(epoch))


@dataclass(frozen=True)
class Unread:
    """A sampled conversation still in its JSON text (``where``: the file and line)."""

    id: str
    text: str
    where: str


def read_conversation(item: StoredConversation | Unread) -> StoredConversation:
    """The conversation of a sampled item (raises ``SourceError`` naming the file and line)."""
    if isinstance(item, StoredConversation):
        return item
    try:
        return conversation_from_dict(json.loads(item.text))
    except (RecordError, ValueError, KeyError, TypeError) as exc:
        raise SourceError(f"{item.where}: a conversation this kit cannot read: {exc}") from None


@dataclass
class Selection:
    """The sample, and what it was drawn from."""

    conversations: Iterator[StoredConversation | Unread]
    selected: int
    available: int
    in_progress: int = 0
    strata: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


# -- the portal ------------------------------------------------------------------------------------
def from_portal(url: str, token: str | None, window: Window, agents: Sequence[str], spec: SampleSpec) -> Selection:
    query = [("since", _iso(window.since)), ("until", _iso(window.until)), ("seed", str(spec.seed))]
    query += [("agent", a) for a in agents]
    if spec.count is not None:
        query.append(("count", str(spec.count)))
    if spec.rate is not None:
        query.append(("rate", str(spec.rate)))
    if spec.stratify:
        query.append(("stratify", ",".join(spec.stratify)))
    first = _get(url, token, [*query, ("offset", "0"), ("limit", str(PAGE))])
    strata: dict[str, str] = {}

    def pages() -> Iterator[StoredConversation]:
        page: Mapping[str, Any] | None = first
        while page is not None:
            for item in page.get("conversations") or ():
                conversation = conversation_from_dict(item)
                if item.get("stratum"):
                    strata[conversation.id] = item["stratum"]
                yield conversation
            following = page.get("next_offset")
            page = _get(url, token, [*query, ("offset", str(following)), ("limit", str(PAGE))]) if following else None

    return Selection(pages(), int(first.get("selected") or 0), int(first.get("available") or 0),
                     int(first.get("in_progress") or 0), strata)


def fetch_conversation(url: str, token: str | None, conversation_id: str) -> StoredConversation:
    return conversation_from_dict(_get(url, token, [], path=f"/api/conversations/{urllib.parse.quote(conversation_id)}"))


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(min(max(epoch, 0.0), 32503680000.0)))


def _get(url: str, token: str | None, query: list[tuple[str, str]], path: str = "/api/conversations") -> dict[str, Any]:
    address = f"{url.rstrip('/')}{path}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
    request = urllib.request.Request(address, headers={"Authorization": f"Bearer {token}"} if token else {})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=TIMEOUT_S) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        raise SourceError(f"the portal at {url} answered {exc.code}: {_said(exc)}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise SourceError(f"the portal at {url} is not reachable: {getattr(exc, 'reason', exc)}") from None


def _said(exc: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(exc.read()).get("error") or exc.reason)
    except (ValueError, AttributeError, OSError):
        return str(exc.reason)


# -- files -------------------------------------------------------------------------------------------
@dataclass
class _Found:
    candidate: Candidate
    where: tuple[Path, int] | None = None  # a line to read again
    conversation: StoredConversation | None = None  # or the conversation itself (OTLP)


def from_files(paths: Sequence[Path], window: Window, agents: Sequence[str], spec: SampleSpec) -> Selection:
    warnings: list[str] = []
    found: dict[str, _Found] = {}
    spans: list[dict[str, Any]] = []
    undated = 0
    for path in paths:
        if not path.is_file():
            raise SourceError(f"{path}: no such file")
        with path.open(encoding="utf-8", errors="replace") as lines:
            for number, line in enumerate(lines, start=1):
                undated += _scan(path, number, line, found, spans, warnings)
    for conversation in conversations_from_spans(spans):
        found.setdefault(conversation.id, _Found(_candidate(conversation), conversation=conversation))
    if undated and window != ALL_TIME:
        warnings.append(f"{undated} run record(s) without a created_at were left out of the window {window.describe()}")
    chosen = {
        cid: item for cid, item in found.items()
        if (window == ALL_TIME or (item.candidate.created_at > 0 and window.contains(item.candidate.created_at)))
        and (not agents or item.candidate.agent in agents)
    }
    sample = select([item.candidate for item in chosen.values()], spec)
    return Selection(_read_again([chosen[i] for i in sample.ids]), len(sample.ids), sample.available,
                     sample.in_progress, dict(sample.strata), warnings)


def _scan(path: Path, number: int, line: str, found: dict[str, _Found], spans: list[dict[str, Any]],
          warnings: list[str]) -> int:
    """Read one line for sampling; returns 1 for a run record without a time."""
    if not line.strip():
        return 0
    head = _summary_head(line)  # a conversation line: its summary, without parsing the record
    if head is not None:
        found[head.id] = _Found(head, (path, number))
        return 0
    try:
        raw = json.loads(line)
        if not isinstance(raw, dict):
            raise ValueError(f"a JSON {type(raw).__name__}, not an object")
    except ValueError as exc:
        warnings.append(f"{path}:{number}: not a JSON object: {exc}")
        return 0
    try:
        if "resourceSpans" in raw:
            spans.extend(spans_of(raw))
            return 0
        if isinstance(raw.get("record"), Mapping) and raw.get("id"):
            check_marker(raw["record"])
            found[raw["id"]] = _Found(_light(raw), (path, number))
            return 0
        if MARKER in raw:
            check_marker(raw)
            cid = str(raw.get("case_id") or f"{path.name}:{number}")
            record = RunRecord.from_metadata(raw)
            created = parse_time(raw["created_at"]) if raw.get("created_at") else 0.0
            conversation = StoredConversation(cid, "", record.agent, created, created, record)
            found[cid] = _Found(_candidate(conversation), conversation=conversation)
            return 0 if created else 1
    except (RecordError, ValueError, KeyError, TypeError) as exc:
        warnings.append(f"{path}:{number}: a conversation this kit cannot read: {exc}")
        return 0
    keys = ", ".join(sorted(map(str, raw))[:8]) or "none"
    warnings.append(f"{path}:{number}: not a conversation, a run record or an OTLP trace (keys: {keys})")
    return 0


_RECORD_KEY = ', "record": {'


def _summary_head(line: str) -> Candidate | None:
    """A line in the portal's conversation form starts with its summary (id … feedback) and then
    ``"record"``: parsing that head alone is what sampling needs, ten times faster than the line.
    None when the line is not in that form (it is then read whole)."""
    if not line.startswith('{"id": '):
        return None
    cut = line.find(_RECORD_KEY)
    if cut < 0:
        return None
    try:
        head = json.loads(line[:cut] + "}")
        return _light(head) if {"tool_errors", "turns", "status"} <= head.keys() else None
    except (ValueError, KeyError, TypeError):
        return None


def _light(raw: Mapping[str, Any]) -> Candidate:
    """What sampling needs, from a conversation's summary (or its record, for a line without one)."""
    record: Mapping[str, Any] = raw["record"] if isinstance(raw.get("record"), Mapping) else {}
    calls = record.get("tool_calls") or []
    feedback: Mapping[str, Any] = raw["feedback"] if isinstance(raw.get("feedback"), Mapping) else {}
    created = parse_time(raw["created_at"]) if raw.get("created_at") else 0.0
    agent = raw.get("agent")
    name = agent.get("name") if isinstance(agent, Mapping) else (record.get("agent") or {}).get("name")
    errors = raw.get("tool_errors")
    return Candidate(
        id=str(raw["id"]), agent=str(name or ""), created_at=created,
        updated_at=parse_time(raw["updated_at"]) if raw.get("updated_at") else created,
        status=str(raw.get("status") or "open"), turns=int(raw.get("turns") or record.get("turns") or 0),
        tool_calls=int(raw["tool_calls"] if isinstance(raw.get("tool_calls"), int) else len(calls)),
        tool_errors=int(errors) if isinstance(errors, int) else sum(
            1 for c in calls if isinstance(c, Mapping) and c.get("is_error")),
        rating=feedback.get("rating") if feedback else None,
    )


def _candidate(conversation: StoredConversation) -> Candidate:
    return Candidate(conversation.id, conversation.agent.name, conversation.created_at, conversation.updated_at,
                     conversation.status, conversation.turns, conversation.tool_calls, conversation.tool_errors,
                     conversation.feedback.rating if conversation.feedback else None)


def _read_again(items: list[_Found]) -> Iterator[StoredConversation | Unread]:
    """The sample: those already read (OTLP, bare records) first, then each file's lines in file order, one
    at a time (a sample of thousands never sits in memory at once), as :class:`Unread` lines: whoever
    scores one reads it (:func:`read_conversation`), in a worker process too."""
    wanted: dict[Path, dict[int, str]] = {}
    for item in items:
        if item.conversation is not None:
            yield item.conversation
        elif item.where is not None:
            wanted.setdefault(item.where[0], {})[item.where[1]] = item.candidate.id
    for path, lines in wanted.items():
        with path.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if number in lines:
                    yield Unread(lines[number], line, f"{path}:{number}")
