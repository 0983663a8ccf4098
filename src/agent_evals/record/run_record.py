"""The run record: everything that happened in one conversation, in one versioned type.

The provider fills a :class:`RunRecord` while the conversation runs and returns it as
the row's metadata (:meth:`RunRecord.to_metadata`); cassettes embed it; assertions,
cleanup, the golden self-check and the report read it back with
:func:`RunRecord.from_metadata`. Standard library only: assertion processes import it.

The metadata form (``docs/record.md`` describes every key)::

    {"agent_evals": 3, "case_id": "C01",
     "agent": {"name", "model", "temperature", "instructions_sha256"},
     "user": {"kind", "model"},
     "turns": 2, "transcript": [{"role", "content", "turn", "tool_calls": [names]}],
     "tool_calls": [ToolCall], "side_effects": [{"kind", "id", "url"?}],
     "conversation_end": "done", "ended_by": "user", "error_kind": null, "error": null,
     "final_reply": "...", "usage": {"agent": {...}, "user": {...}, "judge": {...}},
     "trace": {"eval_id", "test_id"}, "replay": {...} | absent,
     "snapshot": {"read_from", "resources"} | absent,
     "fixtures": [{"kind", "key", ...}] | absent, "judged": [Judgement] | absent,
     "user_review": UserReview | absent}

A record of an older version is read as its upgrade (:mod:`agent_evals.record.versions`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from agent_evals.record.ends import END_REASONS, ERROR_KINDS, End, ended_by
from agent_evals.record.judgement import Judgement
from agent_evals.record.side_effect import SideEffect, SideEffectFormatError
from agent_evals.record.tool_call import ToolCall, ToolCallFormatError
from agent_evals.record.user_review import UserReview
from agent_evals.record.usage import ROLES, Role, Usage
from agent_evals.record.versions import MARKER, RECORD_VERSION, UPGRADABLE, unsupported, upgrade_record
from agent_evals.record.vocabulary import one_of

UserKind = Literal["simulated_user", "user_messages", "class", "single_turn", "human"]  # human: a production conversation
USER_KINDS: tuple[UserKind, ...] = get_args(UserKind)
StopReason = Literal["reply", "max_tool_rounds", "max_tokens"]
STOP_REASONS: tuple[StopReason, ...] = get_args(StopReason)


class RecordError(ValueError):
    """Metadata or a cassette's record is missing, foreign, of another version, or malformed."""


@dataclass(frozen=True)
class Turn:
    """One exchange: the user's message, the agent's reply and the tools it called on the way.

    ``assistant`` is None when the agent never answered (the run broke off in this turn).
    """

    user: str
    assistant: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: StopReason = "reply"

    @property
    def answered(self) -> bool:
        return self.assistant is not None


@dataclass(frozen=True)
class AgentInfo:
    name: str
    model: str = ""
    temperature: float | None = None
    instructions_sha256: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "temperature": self.temperature,
            "instructions_sha256": self.instructions_sha256,
        }

    @classmethod
    def from_dict(cls, raw: Any) -> AgentInfo:
        raw = raw if isinstance(raw, Mapping) else {}
        temperature = raw.get("temperature")
        return cls(
            name=str(raw.get("name") or ""),
            model=str(raw.get("model") or ""),
            temperature=float(temperature) if isinstance(temperature, int | float) else None,
            instructions_sha256=str(raw.get("instructions_sha256") or ""),
        )


@dataclass(frozen=True)
class UserInfo:
    kind: UserKind = "simulated_user"
    model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "model": self.model}

    @classmethod
    def from_dict(cls, raw: Any) -> UserInfo:
        raw = raw if isinstance(raw, Mapping) else {}
        kind = one_of(raw.get("kind"), USER_KINDS, "simulated_user")
        model = raw.get("model")
        return cls(kind=kind, model=str(model) if model else None)


@dataclass(frozen=True)
class Trace:
    """The ids a run's side effects carry (``X-Eval-Id``, ``X-Test-Id``)."""

    eval_id: str
    test_id: str

    def to_dict(self) -> dict[str, str]:
        return {"eval_id": self.eval_id, "test_id": self.test_id}


@dataclass(frozen=True)
class Snapshot:
    """The end state the assertions grade, read from the system under test when the conversation ended.

    ``read_from`` says where it was read (a URL, a folder), for people and for the pack's checks;
    ``resources`` holds what the case's checks read, in JSON form, under keys the pack chooses (e.g.
    ``"pull_requests"``, ``"schema"``, ``"repository"``). Grading reads only this, so a recorded run
    can be graded again without the system.
    """

    read_from: str = ""
    resources: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"read_from": self.read_from, "resources": dict(self.resources)}

    @classmethod
    def from_dict(cls, raw: Any) -> Snapshot:
        if not isinstance(raw, Mapping):
            raise RecordError(
                f"metadata 'snapshot' must be an object {{read_from, resources}}, got {type(raw).__name__}"
            )
        if unknown := sorted(map(str, set(raw) - {"read_from", "resources"})):
            raise RecordError(
                f"metadata 'snapshot' has key(s) {', '.join(unknown)}, which record version {RECORD_VERSION} "
                "does not know: a snapshot is {read_from, resources} (a pack keeps its end state in 'resources')"
            )
        read_from = raw.get("read_from", "")
        resources = raw.get("resources") or {}
        if not isinstance(read_from, str):
            raise RecordError(f"metadata 'snapshot.read_from' must be text, got {type(read_from).__name__}")
        if not isinstance(resources, Mapping):
            raise RecordError("metadata 'snapshot.resources' must be an object")
        return cls(read_from, dict(resources))


@dataclass
class RunRecord:
    """What happened in one conversation (see the module docstring)."""

    case_id: str = ""
    agent: AgentInfo = field(default_factory=lambda: AgentInfo(name=""))
    user: UserInfo = field(default_factory=UserInfo)
    turns: list[Turn] = field(default_factory=list)
    pending: Turn | None = None  # a user message the agent never answered, with the calls made for it
    side_effects: list[SideEffect] = field(default_factory=list)  # what it made in the system, in order, once each
    end: End | None = None
    usage: dict[Role, Usage] = field(default_factory=lambda: {role: Usage() for role in ROLES})
    trace: Trace | None = None
    replay: dict[str, Any] | None = None
    snapshot: Snapshot | None = None
    fixtures: list[dict[str, Any]] = field(default_factory=list)  # what the case relied on, made for it (the pack's form)
    judged: list[Judgement] = field(default_factory=list)  # the judge's verdicts on the judged checks
    user_review: UserReview | None = None  # the simulated user's side, checked (None: not checked)

    # -- reading ---------------------------------------------------------------------
    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        calls = [c for t in self.turns for c in t.tool_calls]
        if self.pending is not None:
            calls.extend(self.pending.tool_calls)
        return tuple(calls)

    @property
    def final_reply(self) -> str:
        return (self.turns[-1].assistant or "") if self.turns else ""

    @property
    def user_messages_sent(self) -> int:
        return len(self.turns) + (1 if self.pending is not None else 0)

    @property
    def error(self) -> str | None:
        return self.end.error if self.end is not None else None

    def assistant_texts(self) -> list[str]:
        """Every reply of the agent, in order."""
        return [t.assistant for t in self.turns if t.assistant]

    def total_usage(self) -> Usage:
        total = Usage()
        for usage in self.usage.values():
            total = total + usage
        return total

    # -- writing (the conversation driver) ---------------------------------------------
    def add_usage(self, role: Role, usage: Usage) -> None:
        self.usage[role] = self.usage.get(role, Usage()) + usage

    def place(self, calls: Sequence[ToolCall], turn: int) -> tuple[ToolCall, ...]:
        """Number ``calls`` after the ones already recorded."""
        start = len(self.tool_calls)
        return tuple(c.placed(turn=turn, index=start + i + 1) for i, c in enumerate(calls))

    def add_side_effect(self, effect: SideEffect) -> None:
        """List ``effect`` unless it is listed already (same kind and id)."""
        if all(s.key != effect.key for s in self.side_effects):
            self.side_effects.append(effect)

    def side_effects_of(self, kind: str) -> list[SideEffect]:
        return [s for s in self.side_effects if s.kind == kind]

    def finish(self, end: End) -> None:
        """Set the end once; a later error does not overwrite the first cause."""
        if self.end is None or (self.end.reason != "error" and end.reason == "error"):
            self.end = end

    # -- metadata form -------------------------------------------------------------------
    def to_metadata(self) -> dict[str, Any]:
        end = self.end or End.failed("internal", "the conversation never ended")
        out: dict[str, Any] = {
            MARKER: RECORD_VERSION,
            "case_id": self.case_id,
            "agent": self.agent.to_dict(),
            "user": self.user.to_dict(),
            "turns": self.user_messages_sent,
            "transcript": self._transcript(),
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "side_effects": [s.to_dict() for s in self.side_effects],
            "conversation_end": end.reason,
            "ended_by": end.by,
            "error_kind": end.error_kind,
            "error": end.error,
            "final_reply": self.final_reply,
            "usage": {role: self.usage.get(role, Usage()).as_dict() for role in ROLES},
        }
        if self.trace is not None:
            out["trace"] = self.trace.to_dict()
        if self.replay is not None:
            out["replay"] = dict(self.replay)
        if self.snapshot is not None:
            out["snapshot"] = self.snapshot.to_dict()
        if self.fixtures:
            out["fixtures"] = [dict(f) for f in self.fixtures]
        if self.judged:
            out["judged"] = [j.to_dict() for j in self.judged]
        if self.user_review is not None:
            out["user_review"] = self.user_review.to_dict()
        return out

    def _transcript(self) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = []
        for number, turn in enumerate([*self.turns, *([self.pending] if self.pending else [])], start=1):
            entries.append({"role": "user", "content": turn.user, "turn": number, "tool_calls": []})
            if turn.answered:
                entry: dict[str, Any] = {
                    "role": "assistant",
                    "content": turn.assistant,
                    "turn": number,
                    "tool_calls": [c.name for c in turn.tool_calls],
                }
                if turn.stop_reason != "reply":
                    entry["stop_reason"] = turn.stop_reason
                entries.append(entry)
        return entries

    @classmethod
    def from_metadata(cls, metadata: Any) -> RunRecord:
        """Read the record back (a version-2 record as its upgrade); raises :class:`RecordError` naming
        what is wrong."""
        check_marker(metadata)
        try:
            metadata = upgrade_record(metadata)
        except ValueError as exc:
            raise RecordError(str(exc)) from None
        try:
            calls = [
                ToolCall.from_dict(c, where=f"tool_calls[{i}]") for i, c in enumerate(_list(metadata, "tool_calls"))
            ]
        except ToolCallFormatError as exc:
            raise RecordError(f"metadata {exc}") from None
        turns, pending = _turns(_list(metadata, "transcript"), calls)
        return cls(
            case_id=str(metadata.get("case_id") or ""),
            agent=AgentInfo.from_dict(metadata.get("agent")),
            user=UserInfo.from_dict(metadata.get("user")),
            turns=turns,
            pending=pending,
            side_effects=_side_effects(_list(metadata, "side_effects")),
            end=_end(metadata),
            usage={role: Usage.from_dict((metadata.get("usage") or {}).get(role)) for role in ROLES},
            trace=_trace(metadata.get("trace")),
            replay=dict(metadata["replay"]) if isinstance(metadata.get("replay"), Mapping) else None,
            snapshot=Snapshot.from_dict(metadata["snapshot"]) if metadata.get("snapshot") is not None else None,
            fixtures=[dict(f) for f in _list(metadata, "fixtures") if isinstance(f, Mapping)],
            judged=_judged(_list(metadata, "judged")),
            user_review=_user_review(metadata.get("user_review")),
        )


def check_marker(metadata: Any) -> None:
    """Raise :class:`RecordError` unless ``metadata`` is a run record of this version or one it upgrades."""
    if not isinstance(metadata, Mapping) or not metadata:
        raise RecordError(
            "no provider metadata: the agent_evals provider (providers/agent.py) returns the "
            "conversation in its response metadata; is this suite using another provider?"
        )
    if MARKER not in metadata:
        keys = ", ".join(sorted(map(str, metadata))) or "none"
        raise RecordError(f"the metadata is not from the agent_evals provider (no {MARKER!r} marker; keys found: {keys})")
    version = metadata[MARKER]
    if isinstance(version, bool) or version not in (*UPGRADABLE, RECORD_VERSION):
        raise RecordError(unsupported(version))


def _list(metadata: Mapping[str, Any], key: str) -> list[Any]:
    value = metadata.get(key, [])
    if not isinstance(value, list):
        raise RecordError(f"metadata {key!r} must be a list, got {type(value).__name__}")
    return value


def _turns(entries: list[Any], calls: list[ToolCall]) -> tuple[list[Turn], Turn | None]:
    """Rebuild the turns from the transcript and the tool calls (each call names its turn)."""
    users: dict[int, str] = {}
    replies: dict[int, Mapping[str, Any]] = {}
    for entry in entries:
        if not isinstance(entry, Mapping) or entry.get("role") not in ("user", "assistant"):
            raise RecordError("metadata 'transcript' must be a list of {role: user|assistant, content, turn} entries")
        number = entry.get("turn")
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise RecordError(f"metadata 'transcript' entry {entry.get('role')} has no turn number (got {number!r})")
        if entry["role"] == "user":
            users[number] = str(entry.get("content") or "")
        else:
            replies[number] = entry
    by_turn: dict[int, list[ToolCall]] = {}
    for position, call in enumerate(calls):
        if call.turn not in users:
            raise RecordError(
                f"metadata tool_calls[{position}] ({call.name}) belongs to turn {call.turn}, "
                "which the transcript does not have"
            )
        by_turn.setdefault(call.turn, []).append(call)
    unanswered = [n for n in sorted(users) if n not in replies]
    if unanswered and unanswered != [max(users)]:
        raise RecordError(f"metadata 'transcript': only the last turn may be unanswered, not turn(s) {unanswered}")
    turns: list[Turn] = []
    pending: Turn | None = None
    for number in sorted(users):
        reply = replies.get(number)
        turn = Turn(
            user=users[number],
            assistant=str(reply.get("content") or "") if reply is not None else None,
            tool_calls=tuple(by_turn.get(number, ())),
            stop_reason=one_of(reply.get("stop_reason") if reply is not None else None, STOP_REASONS, "reply"),
        )
        if turn.answered:
            turns.append(turn)
        else:
            pending = turn
    return turns, pending


def _side_effects(items: list[Any]) -> list[SideEffect]:
    try:
        return [SideEffect.from_dict(item, where=f"metadata side_effects[{i}]") for i, item in enumerate(items)]
    except SideEffectFormatError as exc:
        raise RecordError(str(exc)) from None


def _end(metadata: Mapping[str, Any]) -> End | None:
    reason = metadata.get("conversation_end")
    if reason is None:
        return None
    if reason not in END_REASONS:
        raise RecordError(f"metadata 'conversation_end' is {reason!r}; known: {', '.join(END_REASONS)}")
    if reason != "error":
        return End(reason)
    kind = one_of(metadata.get("error_kind"), ERROR_KINDS, "internal")
    return End("error", kind, str(metadata.get("error") or "unknown error"))


def _judged(items: list[Any]) -> list[Judgement]:
    try:
        return [Judgement.from_dict(item) for item in items]
    except ValueError as exc:
        raise RecordError(str(exc)) from None


def _user_review(raw: Any) -> UserReview | None:
    if raw is None:
        return None
    try:
        return UserReview.from_dict(raw)
    except ValueError as exc:
        raise RecordError(str(exc)) from None


def _trace(raw: Any) -> Trace | None:
    if not isinstance(raw, Mapping) or not raw.get("eval_id"):
        return None
    return Trace(str(raw["eval_id"]), str(raw.get("test_id") or ""))


__all__ = [
    "MARKER",
    "RECORD_VERSION",
    "AgentInfo",
    "RecordError",
    "RunRecord",
    "Snapshot",
    "StopReason",
    "Trace",
    "Turn",
    "UserInfo",
    "UserKind",
    "check_marker",
    "ended_by",
]
