"""The metadata contract between the provider, the assertions and the hooks.

The provider (`providers/agent.py`) returns these keys in its response
``metadata``; assertions read them from ``context["providerResponse"]["metadata"]``
(falling back to ``context["metadata"]``) and the cleanup hook reads
``pull_requests`` from the row's result. Keep the keys and shapes stable.

This module is imported by every assertion process, so it imports nothing
heavy (standard library only).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

ConversationEnd = Literal["done", "gave_up", "max_turns", "error"]
CONVERSATION_ENDS: tuple[ConversationEnd, ...] = ("done", "gave_up", "max_turns", "error")

# The provider stamps its metadata with this marker so that an assertion can tell
# "metadata from another provider" apart from "a conversation without tool calls".
PROVIDER_MARKER_KEY = "agent_evals"
CONTRACT_VERSION = 1


class ToolCallRecord(TypedDict):
    name: str
    arguments: dict[str, Any] | None  # None when the model's arguments were not a JSON object
    raw_arguments: str
    result: Any  # parsed JSON when the tool returned JSON, else text
    is_error: bool
    turn: int  # 1-based number of the user turn the call belongs to


class TranscriptEntry(TypedDict):
    role: Literal["user", "assistant"]
    content: str
    turn: int
    tool_calls: list[str]  # names of the tools the assistant called before this reply


class PullRequestRef(TypedDict):
    id: int
    url: str


class AgentInfo(TypedDict):
    name: str
    model: str
    temperature: float | None
    instructions_sha256: str


class UsageRecord(TypedDict, total=False):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    calls: int
    cost: float


class Usage(TypedDict):
    agent: UsageRecord
    user: UsageRecord


class RunMetadata(TypedDict, total=False):
    agent_evals: int  # PROVIDER_MARKER_KEY: contract version
    tool_calls: list[ToolCallRecord]
    transcript: list[TranscriptEntry]
    pull_requests: list[PullRequestRef]
    turns: int
    conversation_end: ConversationEnd
    final_reply: str
    agent: AgentInfo
    usage: Usage
    case_id: str
    error: str


REQUIRED_KEYS: tuple[str, ...] = (
    "tool_calls",
    "transcript",
    "pull_requests",
    "turns",
    "conversation_end",
    "final_reply",
    "agent",
    "usage",
)
