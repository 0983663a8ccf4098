"""The provider's metadata (see `agent_evals.contract`), checked and read into typed records.

`read_run` raises `MetadataError` with a reason a test author can act on when the
metadata is not from the agent_evals provider (no marker), has another contract
version, or lacks a key the assertion needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agent_evals.contract import CONTRACT_VERSION, PROVIDER_MARKER_KEY


class MetadataError(ValueError):
    """The metadata is missing, foreign, or does not follow the contract."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call of the conversation; ``index`` is its 1-based position among all calls."""

    index: int
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str
    result: Any
    is_error: bool
    turn: int

    def where(self) -> str:
        """``call 3, turn 2``."""
        return f"call {self.index}, turn {self.turn}"


@dataclass(frozen=True)
class Run:
    """The parts of the metadata the assertions read."""

    tool_calls: tuple[ToolCall, ...] = ()
    transcript: tuple[Mapping[str, Any], ...] = ()
    pull_request_ids: tuple[int, ...] = ()
    turns: int = 0
    conversation_end: str = ""
    final_reply: str = ""
    error: str | None = None

    def assistant_texts(self) -> list[str]:
        """The agent's replies (assistant transcript entries, then the final reply)."""
        texts = [
            str(entry.get("content") or "") for entry in self.transcript if entry.get("role") == "assistant"
        ]
        return texts + ([self.final_reply] if self.final_reply else [])


def read_run(metadata: Any, needs: Iterable[str]) -> Run:
    """Check ``metadata`` is ours and read the keys in ``needs`` (contract key names)."""
    if not isinstance(metadata, Mapping) or not metadata:
        raise MetadataError(
            "no provider metadata: the agent_evals provider (providers/agent.py) returns the "
            "conversation in its response metadata; is this suite using another provider?"
        )
    if PROVIDER_MARKER_KEY not in metadata:
        keys = ", ".join(sorted(map(str, metadata))) or "none"
        raise MetadataError(
            f"the metadata is not from the agent_evals provider (no {PROVIDER_MARKER_KEY!r} marker; "
            f"keys found: {keys})"
        )
    version = metadata[PROVIDER_MARKER_KEY]
    if version != CONTRACT_VERSION:
        raise MetadataError(
            f"metadata contract version {version!r} is not supported (these assertions read version "
            f"{CONTRACT_VERSION})"
        )
    needed = tuple(needs)
    missing = [key for key in needed if key not in metadata]
    if missing:
        raise MetadataError(f"the provider metadata lacks the contract key(s) {', '.join(missing)}")
    return Run(
        tool_calls=_tool_calls(metadata["tool_calls"]) if "tool_calls" in needed else (),
        transcript=_transcript(metadata["transcript"]) if "transcript" in needed else (),
        pull_request_ids=_pull_requests(metadata["pull_requests"]) if "pull_requests" in needed else (),
        turns=_integer(metadata, "turns") if "turns" in needed else 0,
        conversation_end=_string(metadata, "conversation_end") if "conversation_end" in needed else "",
        final_reply=_string(metadata, "final_reply") if "final_reply" in needed else "",
        error=str(metadata["error"]) if metadata.get("error") else None,
    )


def _list(value: Any, key: str) -> list[Any]:
    if not isinstance(value, list):
        raise MetadataError(f"metadata {key!r} must be a list, got {type(value).__name__}")
    return value


def _tool_calls(value: Any) -> tuple[ToolCall, ...]:
    calls = []
    for index, record in enumerate(_list(value, "tool_calls"), start=1):
        if not isinstance(record, Mapping) or not isinstance(record.get("name"), str):
            raise MetadataError(f"metadata tool_calls[{index - 1}] is not a tool call record with a 'name'")
        arguments, turn = record.get("arguments"), record.get("turn")
        calls.append(
            ToolCall(
                index=index,
                name=record["name"],
                arguments=dict(arguments) if isinstance(arguments, Mapping) else None,
                raw_arguments=str(record.get("raw_arguments") or ""),
                result=record.get("result"),
                is_error=bool(record.get("is_error", False)),
                turn=turn if isinstance(turn, int) and not isinstance(turn, bool) else 0,
            )
        )
    return tuple(calls)


def _transcript(value: Any) -> tuple[Mapping[str, Any], ...]:
    entries = _list(value, "transcript")
    if not all(isinstance(entry, Mapping) for entry in entries):
        raise MetadataError("metadata 'transcript' must be a list of {role, content, turn} entries")
    return tuple(entries)


def _pull_requests(value: Any) -> tuple[int, ...]:
    ids = []
    for ref in _list(value, "pull_requests"):
        pr_id = ref.get("id") if isinstance(ref, Mapping) else None
        if isinstance(pr_id, bool) or not isinstance(pr_id, int):
            raise MetadataError(f"metadata 'pull_requests' entries must be {{id, url}}, got {ref!r:.80}")
        ids.append(pr_id)
    return tuple(ids)


def _integer(metadata: Mapping[str, Any], key: str) -> int:
    value = metadata[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise MetadataError(f"metadata {key!r} must be an integer, got {value!r:.60}")
    return value


def _string(metadata: Mapping[str, Any], key: str) -> str:
    value = metadata[key]
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MetadataError(f"metadata {key!r} must be a string, got {type(value).__name__}")
    return value
