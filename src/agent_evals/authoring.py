"""Everything a domain pack needs from the kit, under names that stay: import from here only.

A pack (your own, or one of the kit's) imports ``agent_evals`` through this module and nothing
else; its own modules import each other. ``tests/core/test_generic_core.py`` holds every built-in
pack but the first one (its portal still reaches inside) and the tests' toy pack to that. The guide with a whole example is
``docs/authoring.md``; in brief:

1. **The pack**: subclass :class:`Pack` and override what your domain needs (every hook has a
   default that does nothing): ``name``, ``checks``, ``user_framing`` (a :class:`UserFraming`),
   ``system``, ``preflight``, ``plan_values`` (a :class:`PlanValues`, with :class:`Live` values),
   ``mutations`` (:class:`Mutation` s of a golden :class:`Cassette`, edited on a
   :class:`CassetteTape` or with :func:`edit_tool_arguments`), ``harmless_call``,
   ``case_derivation`` (a :data:`CaseDerivation`) and ``promoted_fixtures``.
   A suite names it by dotted path: ``pack: mypackage.packs:TicketsPack``.
2. **The system under test**: subclass :class:`System` (run scope: :class:`SystemPool`,
   :class:`Running`; conversation scope: :class:`Conversation`, tagged by its :class:`Trace`;
   what a tool call made is a :class:`SideEffect` of a kind the pack names (the record's
   ``side_effects``); undo answers a :class:`CleanupReport`, worded per kind by the pack's
   :class:`UndoWords`; :func:`trace_of_row` finds a Promptfoo row's trace).
   Its errors are the :class:`SystemFailure` family (:class:`SystemNotConfigured`,
   :class:`SystemUnavailable`, :class:`SystemSetupError`); a case's bad fixtures are a
   :class:`FixtureError`. Everything is a :class:`KitError` with a ``kind``.
3. **The checks**: ``Pack.checks`` maps a check's name to its module, which defines ``VERSION``
   (an integer, bumped when a verdict can change), ``parse_config(raw)`` (read with a
   :class:`ConfigReader`, raising :class:`ConfigError`) and ``grade(config, metadata)``
   (decorated with :func:`grader`; it reads the run record with :func:`read_record` and the end
   state with :func:`require_snapshot`, raises :class:`MetadataError` on a row it cannot read,
   answers :func:`make_result` or :func:`fail`). A suite writes it as ``type: python`` on an
   ``assertions/<name>.py`` of its own that calls :func:`grade_from_context`; the provider grades
   it in its worker too, and a name no one knows is one ``config`` error.
4. **The record** a check reads: :class:`RunRecord` (its :class:`ToolCall` s, its
   :class:`Snapshot`), :class:`RecordError` when metadata is not a record.

What the agent's configuration says (to list its MCP servers' tools offline, for
``System.offered_tools``): :func:`load_agent_config`, :func:`resolve_servers`, :class:`StdioServer`,
:func:`mcp_tool_to_spec`. They load the agent package (pydantic, and the SDKs it reaches), so they are
imported when first used, not with this module: a check's process stays small.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agent_evals.assertions import GradingResult, grade_from_context, grader, make_result
from agent_evals.assertions._config import ConfigError, ConfigReader, describe
from agent_evals.assertions._result import fail
from agent_evals.assertions._run import MetadataError, read_record, require_snapshot
from agent_evals.assertions.names import count_label, first_match, name_matches
from agent_evals.cleanup import trace_of_row
from agent_evals.conversation.cassette import Cassette
from agent_evals.conversation.framing import UserFraming
from agent_evals.golden.plan import Live
from agent_evals.golden.selfcheck import CassetteTape, edit_tool_arguments
from agent_evals.llm.types import ToolSpec
from agent_evals.packs import PackError
from agent_evals.packs.base import CaseDerivation, GenericPack, Pack
from agent_evals.packs.plans import Case, Mutation, PlanValues
from agent_evals.paths import default_data_dir
from agent_evals.processes import ProcessRef
from agent_evals.record import KitError, RecordError, RunRecord, SideEffect, Snapshot, ToolCall, Trace
from agent_evals.suites.check_ref import CheckRef
from agent_evals.suites.discovery import Suite
from agent_evals.suites.shard_spec import Shard
from agent_evals.system import (
    CleanupReport,
    Conversation,
    FixtureError,
    Running,
    System,
    SystemFailure,
    SystemNotConfigured,
    SystemPool,
    SystemSetupError,
    SystemUnavailable,
    UndoWords,
)
from agent_evals.testing.scripted_replies import ChatRequest

if TYPE_CHECKING:
    from agent_evals.agent.config import load_agent_config
    from agent_evals.agent.mcp_sdk import mcp_tool_to_spec
    from agent_evals.agent.mcp_servers import StdioServer, resolve_servers

# The agent's configuration, imported on first use (PEP 562): the agent package loads pydantic and its SDKs.
_ON_FIRST_USE = {
    "load_agent_config": "agent_evals.agent.config",
    "mcp_tool_to_spec": "agent_evals.agent.mcp_sdk",
    "resolve_servers": "agent_evals.agent.mcp_servers",
    "StdioServer": "agent_evals.agent.mcp_servers",
}


def __getattr__(name: str) -> Any:
    if name in _ON_FIRST_USE:
        return getattr(importlib.import_module(_ON_FIRST_USE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    # the pack and its hooks
    "Case",
    "CaseDerivation",
    "Cassette",
    "CassetteTape",
    "ChatRequest",
    "GenericPack",
    "Live",
    "Mutation",
    "Pack",
    "PackError",
    "PlanValues",
    "UserFraming",
    "edit_tool_arguments",
    # the system under test
    "CleanupReport",
    "Conversation",
    "FixtureError",
    "ProcessRef",
    "Running",
    "Shard",
    "SideEffect",
    "Suite",
    "System",
    "SystemFailure",
    "SystemNotConfigured",
    "SystemPool",
    "SystemSetupError",
    "SystemUnavailable",
    "ToolSpec",
    "UndoWords",
    "default_data_dir",
    "trace_of_row",
    # the checks
    "CheckRef",
    "ConfigError",
    "ConfigReader",
    "GradingResult",
    "MetadataError",
    "count_label",
    "describe",
    "fail",
    "first_match",
    "grade_from_context",
    "grader",
    "make_result",
    "name_matches",
    "read_record",
    "require_snapshot",
    # the record a check reads
    "KitError",
    "RecordError",
    "RunRecord",
    "Snapshot",
    "ToolCall",
    "Trace",
    # the agent's configuration (imported on first use)
    "StdioServer",
    "load_agent_config",
    "mcp_tool_to_spec",
    "resolve_servers",
]
