"""The run record: one type for what happened in a conversation (standard library only).

``ToolCall`` (one tool call with a typed outcome), ``SideEffect`` (one thing it made in the
system under test), ``End`` (how the conversation ended,
who ended it, the kind of error), ``Usage`` by role, ``UserReview`` (what the checks of the
simulated user found), and ``RunRecord``, which the
provider's metadata, cassettes, assertions, cleanup, the golden self-check and the report
all read and write. See ``docs/record.md``.
"""

from agent_evals.record.ends import (
    END_REASONS,
    ERROR_KINDS,
    End,
    EndedBy,
    EndReason,
    ErrorKind,
    KitError,
    ended_by,
)
from agent_evals.record.judgement import Judgement, Verdict, judgement_key, question_key
from agent_evals.record.run_record import (
    MARKER,
    RECORD_VERSION,
    STOP_REASONS,
    AgentInfo,
    RecordError,
    RunRecord,
    Snapshot,
    StopReason,
    Trace,
    Turn,
    UserInfo,
    UserKind,
    check_marker,
)
from agent_evals.record.side_effect import SideEffect, SideEffectFormatError
from agent_evals.record.tool_call import TOOL_OUTCOMES, ToolCall, ToolCallFormatError, ToolOutcome, parse_arguments
from agent_evals.record.usage import ROLES, Role, Usage, usage_by_role
from agent_evals.record.user_review import USER_CHECKS, Undecided, UserCheck, UserFinding, UserReview
from agent_evals.record.versions import RENAMED_ERROR_KINDS, upgrade_record
from agent_evals.record.vocabulary import is_one_of, one_of

__all__ = [
    "END_REASONS",
    "ERROR_KINDS",
    "MARKER",
    "RECORD_VERSION",
    "RENAMED_ERROR_KINDS",
    "ROLES",
    "STOP_REASONS",
    "TOOL_OUTCOMES",
    "USER_CHECKS",
    "AgentInfo",
    "End",
    "EndReason",
    "EndedBy",
    "ErrorKind",
    "Judgement",
    "KitError",
    "RecordError",
    "Role",
    "SideEffect",
    "SideEffectFormatError",
    "RunRecord",
    "Snapshot",
    "StopReason",
    "ToolCall",
    "ToolCallFormatError",
    "ToolOutcome",
    "Trace",
    "Turn",
    "Undecided",
    "Usage",
    "UserCheck",
    "UserFinding",
    "UserInfo",
    "UserKind",
    "UserReview",
    "Verdict",
    "check_marker",
    "ended_by",
    "is_one_of",
    "judgement_key",
    "one_of",
    "parse_arguments",
    "question_key",
    "upgrade_record",
    "usage_by_role",
]
