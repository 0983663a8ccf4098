"""Cassettes: a recorded conversation, replayable without a model.

A cassette is JSON::

    {
      "format": "agent-evals/cassette@2",
      "case_id": "C01",
      "recorded_at": "2026-11-29T12:00:00Z",
      "fingerprints": {"case": {...}, "user": {...}, "agent": {...}},
      "model_calls": [{"role": "agent" | "user" | "judge",
                       "question": "<key>",          (judge calls only)
                       "response": {"content", "tool_calls": [{"id", "name", "arguments"}],
                                    "usage", "model", "finish_reason"}}],
      "record": { the run record, as in the row's metadata (agent_evals.record) }
    }

``model_calls`` are the model responses of agent, simulated user and judge, in the order
they were asked for. Replay serves the agent's and the user's in that order while the tools
run for real, and each judge reply by the ``question`` it answered (a judged check's key and
the question's number, :func:`agent_evals.record.question_key`), so a replay re-grades with
the recorded verdicts even where the transcript carries translated values; the
embedded ``record`` (tool calls with their typed outcomes, user messages, the end) is what
replay checks the run against, and ``fingerprints`` say what the conversation depended on
(:mod:`agent_evals.conversation.fingerprints`), so a recording that went stale is named.
Secrets are redacted before a cassette is written.

Format history: ``@1`` (until 2026-12) had its own tool-call and outcome types and no
fingerprints; ``agent-evals cassettes upgrade DIR`` converts it (:func:`upgrade_v1`). The embedded
record has its own version (:mod:`agent_evals.record.versions`): a cassette whose record is of
version 2 is read as its upgrade, and ``cassettes upgrade`` writes that upgrade into the file
(:func:`upgrade_record_of`), its fingerprints kept (the upgrade changes no model input).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from agent_evals.llm.types import ChatResponse, Role
from agent_evals.record import (
    MARKER,
    RECORD_VERSION,
    ROLES,
    KitError,
    RecordError,
    RunRecord,
    ToolCall,
    ToolCallFormatError,
    Usage,
    upgrade_record,
)
from agent_evals.secrets import redact

FORMAT: Final = "agent-evals/cassette@2"
OLD_FORMATS: Final = ("agent-evals/cassette@1",)
UPGRADE_COMMAND = "npx agent-evals cassettes upgrade"
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class CassetteError(KitError, ValueError):
    """A cassette is missing, malformed, of an unknown format, or no longer fits the run (kind ``replay``)."""

    kind = "replay"


@dataclass
class ModelCall:
    role: Role
    response: ChatResponse
    question: str | None = None  # for a judge call: the question it answered (record.question_key)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role}
        if self.question is not None:
            out["question"] = self.question
        out["response"] = response_to_dict(self.response)
        return out


@dataclass
class Cassette:
    case_id: str
    record: RunRecord
    model_calls: list[ModelCall] = field(default_factory=list)
    fingerprints: dict[str, Any] = field(default_factory=dict)
    recorded_at: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))

    def to_dict(self) -> dict[str, Any]:
        record = self.record.to_metadata()
        record.pop("snapshot", None)  # the end state is re-read on every replay
        return {
            "format": FORMAT,
            "case_id": self.case_id,
            "recorded_at": self.recorded_at,
            "fingerprints": self.fingerprints,
            "model_calls": [c.to_dict() for c in self.model_calls],
            "record": record,
        }

    @classmethod
    def from_dict(cls, raw: Any, *, where: str = "cassette") -> Cassette:
        if not isinstance(raw, Mapping):
            raise CassetteError(f"{where} is not a JSON object")
        fmt = raw.get("format")
        if fmt in OLD_FORMATS:
            raise CassetteError(
                f"{where} has format {fmt}, older than this kit's {FORMAT}: upgrade it with "
                f"`{UPGRADE_COMMAND} {Path(where).parent if where != 'cassette' else 'DIR'}` (or re-record it)"
            )
        if fmt != FORMAT:
            raise CassetteError(f"{where} has format {fmt!r}, which this kit does not know (it reads {FORMAT})")
        problems = [f"missing {key!r}" for key in ("case_id", "model_calls", "record") if key not in raw]
        if problems:
            raise CassetteError(f"{where} is malformed: {', '.join(problems)}")
        try:
            record = RunRecord.from_metadata(raw["record"])
            calls = [_model_call(item, i) for i, item in enumerate(_list(raw["model_calls"], "model_calls"))]
        except (RecordError, ToolCallFormatError, ValueError) as exc:
            raise CassetteError(f"{where} is malformed: {exc}") from None
        fingerprints = raw.get("fingerprints") or {}
        if not isinstance(fingerprints, Mapping):
            raise CassetteError(f"{where} is malformed: 'fingerprints' must be an object")
        return cls(
            case_id=str(raw["case_id"]),
            record=record,
            model_calls=calls,
            fingerprints=dict(fingerprints),
            recorded_at=str(raw.get("recorded_at") or ""),
        )


def response_to_dict(response: ChatResponse) -> dict[str, Any]:
    return {
        "content": response.content,
        "tool_calls": [c.request_dict() for c in response.tool_calls],
        "usage": response.usage.as_dict(),
        "model": response.model,
        "finish_reason": response.finish_reason,
    }


def response_from_dict(raw: Any, *, where: str = "response") -> ChatResponse:
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where} is not an object")
    content = raw.get("content")
    if content is not None and not isinstance(content, str):
        raise ValueError(f"{where}.content must be text or null")
    calls = tuple(
        ToolCall.request(str(c.get("id") or f"call_{i}"), str(c.get("name") or ""), str(c.get("arguments") or ""))
        if isinstance(c, Mapping) and c.get("name")
        else _bad_call(where, i)
        for i, c in enumerate(_list(raw.get("tool_calls") or [], f"{where}.tool_calls"))
    )
    usage = Usage.from_dict(raw.get("usage") if isinstance(raw.get("usage"), Mapping) else {})
    return ChatResponse(
        content=content,
        tool_calls=calls,
        usage=usage if usage.calls else Usage(usage.prompt_tokens, usage.completion_tokens, usage.total_tokens, 1, usage.cost),
        model=str(raw.get("model") or ""),
        finish_reason=raw.get("finish_reason") if isinstance(raw.get("finish_reason"), str) else None,
    )


def _bad_call(where: str, index: int) -> ToolCall:
    raise ValueError(f"{where}.tool_calls[{index}] has no name")


def _model_call(item: Any, index: int) -> ModelCall:
    where = f"model_calls[{index}]"
    if not isinstance(item, Mapping) or item.get("role") not in ROLES:
        raise ValueError(f"{where} needs a role ({', '.join(ROLES)}) and a response")
    question = item.get("question")
    if question is not None and not isinstance(question, str):
        raise ValueError(f"{where}.question must be text")
    return ModelCall(
        role=item["role"], response=response_from_dict(item.get("response"), where=f"{where}.response"), question=question
    )


def _list(value: Any, key: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{key!r} must be a list")
    return value


def cassette_filename(case_id: str, *, variant: str | None = None, repeat: int = 0) -> str:
    """``C01.json``, ``C01--gpt-4o.json``, ``C01.r2.json``: one file per case, variant and repeat."""
    stem = _SAFE_NAME.sub("_", case_id).strip("._") or "case"
    if variant:
        stem += "--" + (_SAFE_NAME.sub("_", variant).strip("._") or "variant")
    if repeat:
        stem += f".r{repeat}"
    return stem + ".json"


def load_cassette(path: Path) -> Cassette:
    if not path.is_file():
        how = ("a golden conversation: add the case to golden/plan.yaml, then `npx agent-evals golden <suite> --stale`"
               if path.parent.name == "golden" else "record it with `npm run eval -- <suite> --record DIR`")
        raise CassetteError(f"no cassette at {path} ({how}; or check the replay folder)")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise CassetteError(f"cassette {path} is not valid JSON: {exc}") from exc
    return Cassette.from_dict(raw, where=f"cassette {path}")


def save_cassette(cassette: Cassette, path: Path) -> Path:
    """Write atomically, with secrets redacted."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = redact(cassette.to_dict())
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


# -- format upgrades -----------------------------------------------------------------------------
def upgrade_v1(raw: Mapping[str, Any]) -> dict[str, Any]:
    """An ``@1`` cassette in the ``@2`` form, its record of this kit's version. Its fingerprints are
    unknown (left empty: replay says so in the row's ``replay`` metadata instead of checking them)."""
    raw = copy.deepcopy(dict(raw))
    outcome = raw.get("outcome") or {}
    end = outcome.get("conversation_end", "error")
    error = outcome.get("error")
    calls = []
    for index, old in enumerate(raw.get("tool_calls") or [], start=1):
        calls.append({
            "id": f"call_{index}", "name": old["name"], "arguments": old.get("arguments"),
            "raw_arguments": old.get("raw_arguments", ""), "result": old.get("result"), "turn": old.get("turn", 0),
            "index": index, "outcome": _v1_outcome(old), "duration_ms": 0.0,
        })
    messages = list(raw.get("user_messages") or [])
    replies = [c["response"].get("content") or "" for c in raw.get("model_calls") or []
               if c.get("role") == "agent" and not c["response"].get("tool_calls")]
    answered = min(len(replies), len(messages))  # a turn that broke off has no reply
    transcript: list[dict[str, Any]] = []
    for number, text in enumerate(messages, start=1):
        transcript.append({"role": "user", "content": text, "turn": number, "tool_calls": []})
        if number <= answered:
            transcript.append({"role": "assistant", "content": replies[number - 1], "turn": number,
                               "tool_calls": [c["name"] for c in calls if c["turn"] == number]})
    record = {
        MARKER: 2, "case_id": raw.get("case_id", ""), "agent": raw.get("agent") or {},
        "user": {"kind": (raw.get("user") or {}).get("kind", "simulated_user"), "model": (raw.get("user") or {}).get("model")},
        "turns": len(messages), "transcript": transcript, "tool_calls": calls,
        "pull_requests": outcome.get("pull_requests") or [], "conversation_end": end,
        "error_kind": "internal" if end == "error" else None, "error": error,
        "usage": {}, "final_reply": replies[-1] if replies else "",
    }
    return {
        "format": FORMAT, "case_id": raw.get("case_id", ""), "recorded_at": raw.get("recorded_at", ""),
        "fingerprints": {}, "record": upgrade_record(record),
        "model_calls": [
            {"role": c["role"], "response": {**c["response"], "tool_calls": list(c["response"].get("tool_calls") or [])}}
            for c in raw.get("model_calls") or []
        ],
    }


def _v1_outcome(old: Mapping[str, Any]) -> str:
    if not old.get("is_error"):
        return "ok"
    text = str(old.get("result") or "")
    if "is not one of your tools" in text or "not executed: the agent reached its limit" in text:
        return "refused"
    if "are not a JSON object" in text:
        return "invalid_arguments"
    return "tool_error"


def upgrade_record_of(raw: Mapping[str, Any]) -> dict[str, Any]:
    """An ``@2`` cassette whose record is of an older version, its record upgraded
    (:func:`agent_evals.record.upgrade_record`); everything else, fingerprints included, as it was."""
    return {**copy.deepcopy(dict(raw)), "record": upgrade_record(raw["record"])}


def _upgraded(raw: Any) -> dict[str, Any] | None:
    """The upgrade of a cassette that needs one, else None (current, or not a cassette)."""
    if not isinstance(raw, dict):
        return None
    if raw.get("format") in OLD_FORMATS:
        return upgrade_v1(raw)
    record = raw.get("record")
    if raw.get("format") == FORMAT and isinstance(record, Mapping) and record.get(MARKER) != RECORD_VERSION:
        return upgrade_record_of(raw)  # refuses a version it cannot upgrade (CassetteError below)
    return None


def upgrade_folder(folder: Path) -> list[Path]:
    """Upgrade every ``@1`` cassette, and every ``@2`` cassette whose record is of an older version, in
    ``folder`` (recursively) in place; returns the upgraded files. Raises :class:`CassetteError` naming
    a cassette it cannot upgrade (a record version this kit does not know) before writing any."""
    upgrades = []
    for path in sorted(folder.rglob("*.json")):
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        try:
            new = _upgraded(raw)
        except ValueError as exc:
            raise CassetteError(f"cassette {path}: {exc}") from None
        if new is not None:
            Cassette.from_dict(new, where=str(path))  # it must read back
            upgrades.append((path, new))
    for path, new in upgrades:
        path.write_text(json.dumps(new, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return [path for path, _ in upgrades]
