"""Cassettes: a recorded conversation, replayable without a model.

A cassette is JSON::

    {
      "format": "agent-evals/cassette@1",
      "case_id": "C01",
      "recorded_at": "2026-11-29T12:00:00Z",
      "agent": {"name", "model", "temperature", "instructions_sha256"},
      "user": {"kind": "simulated_user" | "user_messages" | "class" | "single_turn", "model": ...},
      "model_calls": [{"role": "agent" | "user", "response": {"content", "tool_calls": [{"id", "name", "arguments"}],
                                                              "usage", "model", "finish_reason"}}],
      "tool_calls": [{"turn", "name", "arguments", "raw_arguments", "result", "is_error"}],
      "user_messages": ["...", ...],
      "outcome": {"conversation_end", "turns", "pull_requests": [{"id", "url"}], "error"}
    }

``model_calls`` are the model responses of agent and simulated user, in the
order they were asked for. Replay serves them in that order while the tools run
for real; ``tool_calls`` and ``user_messages`` are what replay checks the run
against. Secrets are redacted before a cassette is written.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_evals.llm.types import ChatResponse, ToolCallRequest, Usage
from agent_evals.secrets import redact
from agent_evals.validation_errors import describe

FORMAT: Final = "agent-evals/cassette@1"
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class CassetteError(ValueError):
    """A cassette is missing, malformed, or no longer fits the run."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RecordedToolRequest(_Strict):
    id: str
    name: str
    arguments: str


class RecordedResponse(_Strict):
    content: str | None = None
    tool_calls: list[RecordedToolRequest] = Field(default_factory=list)
    usage: dict[str, float] = Field(default_factory=dict)
    model: str = ""
    finish_reason: str | None = None

    @classmethod
    def from_response(cls, response: ChatResponse) -> RecordedResponse:
        return cls(
            content=response.content,
            tool_calls=[RecordedToolRequest(id=c.id, name=c.name, arguments=c.arguments) for c in response.tool_calls],
            usage=response.usage.as_dict(),
            model=response.model,
            finish_reason=response.finish_reason,
        )

    def to_response(self) -> ChatResponse:
        usage = Usage(
            prompt_tokens=int(self.usage.get("prompt_tokens", 0)),
            completion_tokens=int(self.usage.get("completion_tokens", 0)),
            total_tokens=int(self.usage.get("total_tokens", 0)),
            calls=int(self.usage.get("calls", 1)),
            cost=float(self.usage.get("cost", 0.0)),
        )
        return ChatResponse(
            content=self.content,
            tool_calls=tuple(ToolCallRequest(id=c.id, name=c.name, arguments=c.arguments) for c in self.tool_calls),
            usage=usage,
            model=self.model,
            finish_reason=self.finish_reason,
        )


class ModelCall(_Strict):
    role: Literal["agent", "user"]
    response: RecordedResponse


class RecordedToolCall(_Strict):
    turn: int
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str
    result: Any = None
    is_error: bool = False


class Outcome(_Strict):
    conversation_end: Literal["done", "gave_up", "max_turns", "error"]
    turns: int
    pull_requests: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None


class Cassette(_Strict):
    format: Literal["agent-evals/cassette@1"] = FORMAT
    case_id: str
    recorded_at: str = Field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    agent: dict[str, Any] = Field(default_factory=dict)
    user: dict[str, Any] = Field(default_factory=dict)
    model_calls: list[ModelCall] = Field(default_factory=list)
    tool_calls: list[RecordedToolCall] = Field(default_factory=list)
    user_messages: list[str] = Field(default_factory=list)
    outcome: Outcome | None = None


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
        raise CassetteError(f"no cassette at {path} (record one with --record, or check the replay folder)")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise CassetteError(f"cassette {path} is not valid JSON: {exc}") from exc
    try:
        return Cassette.model_validate(raw)
    except ValidationError as exc:
        problems = describe(exc, limit=5)
        raise CassetteError(f"cassette {path} is malformed: {problems}") from exc


def save_cassette(cassette: Cassette, path: Path) -> Path:
    """Write atomically, with secrets redacted."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = redact(cassette.model_dump(mode="json"))
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
