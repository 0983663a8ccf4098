"""Everything a domain pack needs from the kit, under names that stay: import from here only.

A pack (your own, or one of the kit's) imports ``agent_evals`` through this module and nothing
else; its own modules import each other. ``tests/core/test_generic_core.py`` holds every built-in
pack (the first one, with its web backend, included) and the tests' toy packs to that. The guide with a
whole example is ``docs/authoring.md``; in brief:

1. **The pack**: subclass :class:`Pack` and override what your domain needs (every hook has a
   default that does nothing): ``name``, ``checks``, ``user_framing`` (a :class:`UserFraming`),
   ``system``, ``preflight`` (a near name with :func:`did_you_mean`), ``plan_values`` (a
   :class:`PlanValues`, with :class:`Live` values, :class:`Unavailable` ones, :class:`PlanError`),
   ``mutations`` (:class:`Mutation` s of a golden :class:`Cassette`, edited on a
   :class:`CassetteTape` or with :func:`edit_tool_arguments`), ``harmless_call``,
   ``case_derivation`` (a :data:`CaseDerivation`) and ``promoted_fixtures``.
   A suite names it by dotted path: ``pack: mypackage.packs:TicketsPack``. A scripted agent for
   its tests: :class:`ConversationScript` of :data:`Step` s (:class:`Reply`, or a function of the
   :class:`ChatRequest` reading :func:`tool_result`), the user's :data:`CONFIRM` and :data:`THANKS`.
2. **The system under test**: subclass :class:`System` (run scope: :class:`SystemPool`,
   :class:`Running`; conversation scope: :class:`Conversation`, tagged by its :class:`Trace`;
   what a tool call made is a :class:`SideEffect` of a kind the pack names (the record's
   ``side_effects``); undo answers a :class:`CleanupReport`, worded per kind by the pack's
   :class:`UndoWords`; :func:`trace_of_row` and :func:`metadata_of_row` read a Promptfoo row).
   Its errors are the :class:`SystemFailure` family (:class:`SystemNotConfigured`,
   :class:`SystemUnavailable`, :class:`SystemSetupError`); a case's bad fixtures are a
   :class:`FixtureError`. Everything is a :class:`KitError` with a ``kind``.
   A system that starts its own server: :func:`start_detached` (out of the terminal's Ctrl-C),
   :func:`kit_command` (``agent-evals`` in a child; a :class:`KitStarter`, the run's way of starting it,
   :data:`COLD` outside a run), :class:`ProcessRef` and :func:`pid_alive`
   (a recorded pid, told apart from a reused one), :func:`pause_point` (a test's exact moment),
   :func:`default_data_dir`; the suites it serves: :class:`Suite`, :func:`discover_suites`,
   :func:`select_suites`, a shard's :class:`Shard`, a suite's eval id (:func:`suite_eval_id`);
   a run stopped for good raises :class:`ForcedExit` through it. The runs that died
   (``sweep_dead_runs``, ``clean``): :func:`runs_dir`, :func:`stale_runs`, :func:`stale_data_dirs`,
   :func:`sweep_stale`, :func:`run_of`. A web backend mounts the live-evaluation routes (the chat
   endpoint, the stored conversations): :func:`live_routers`.
3. **The checks**: ``Pack.checks`` maps a check's name to its module, which defines ``VERSION``
   (an integer, bumped when a verdict can change), ``parse_config(raw)`` (read with a
   :class:`ConfigReader`, raising :class:`ConfigError`) and ``grade(config, metadata)``
   (decorated with :func:`grader`; it reads the run record with :func:`read_record` and the end
   state with :func:`require_snapshot`, raises :class:`MetadataError` on a row it cannot read,
   answers :func:`make_result` or :func:`fail`). A suite writes it as ``type: python`` on an
   ``assertions/<name>.py`` of its own that calls :func:`grade_from_context`; the provider grades
   it in its worker too, and a name no one knows is one ``config`` error.
   For JSON documents: :func:`check_changes` (a document against its source and
   :class:`ExpectedChange` s, :data:`REMOVED` included, answering a :class:`ChangeReport` of
   :class:`EntryOutcome` s; :func:`expected_document`; a bad pointer is a :class:`PointerError`),
   :func:`leaf_diff`, :func:`schema_issues` (:class:`SchemaIssue` s, :class:`BadSchema`) and
   :func:`render` (a value as a reason shows it).
4. **The record** a check reads: :class:`RunRecord` (its :class:`ToolCall` s, its
   :class:`Snapshot`), :class:`RecordError` when metadata is not a record.

What the agent's configuration says (to list its MCP servers' tools offline, for
``System.offered_tools``): :func:`load_agent_config`, :func:`resolve_servers`, :class:`StdioServer`,
:func:`mcp_tool_to_spec` (and :func:`precompile_output_validators`, for a system's tools, in the warm
server before it forks the workers). They load the agent package (pydantic, and the SDKs it reaches),
so they are imported when first used, not with this module: a check's process stays small. So are the golden
plans' and the self-check's names (YAML), :func:`did_you_mean`, the runner's (:class:`ForcedExit`, the
sweep) and :func:`live_routers` (FastAPI and the agent).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agent_evals.assertions import GradingResult, grade_from_context, grader, make_result
from agent_evals.assertions._config import ConfigError, ConfigReader, describe
from agent_evals.assertions._result import fail
from agent_evals.assertions._run import MetadataError, read_record, require_snapshot
from agent_evals.assertions.expected_changes import (
    REMOVED,
    ChangeReport,
    EntryOutcome,
    ExpectedChange,
    check_changes,
    expected_document,
)
from agent_evals.assertions.json_pointer import PointerError
from agent_evals.assertions.json_text import render
from agent_evals.assertions.leaf_diff import diff as leaf_diff
from agent_evals.assertions.names import count_label, first_match, name_matches
from agent_evals.assertions.schema_check import BadSchema, SchemaIssue, schema_issues
from agent_evals.cleanup import metadata_of_row, trace_of_row
from agent_evals.conversation.cassette import Cassette
from agent_evals.conversation.framing import UserFraming
from agent_evals.llm.types import ToolSpec
from agent_evals.packs import PackError
from agent_evals.packs.base import CaseDerivation, GenericPack, Pack
from agent_evals.packs.plans import Case, Mutation, PlanValues
from agent_evals.paths import default_data_dir
from agent_evals.processes import COLD, KitStarter, ProcessRef, kit_command, pid_alive, start_detached
from agent_evals.record import KitError, RecordError, RunRecord, SideEffect, Snapshot, ToolCall, Trace
from agent_evals.suites.check_ref import CheckRef
from agent_evals.suites.discovery import Suite
from agent_evals.suites.discovery import discover as discover_suites
from agent_evals.suites.discovery import select as select_suites
from agent_evals.suites.manifest import runs_dir, suite_eval_id
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
from agent_evals.testing.conversations import CONFIRM, THANKS, ConversationScript, Step, tool_result
from agent_evals.testing.pause_points import pause_point
from agent_evals.testing.scripted_replies import ChatRequest, Reply

if TYPE_CHECKING:
    from agent_evals.agent.config import load_agent_config
    from agent_evals.agent.mcp_sdk import mcp_tool_to_spec, precompile_output_validators
    from agent_evals.agent.mcp_servers import StdioServer, resolve_servers
    from agent_evals.golden.plan import Live, PlanError, Unavailable
    from agent_evals.golden.selfcheck import CassetteTape, edit_tool_arguments
    from agent_evals.live.routers import live_routers
    from agent_evals.runner.interrupts import ForcedExit
    from agent_evals.runner.sweep import run_of, stale_data_dirs, stale_runs, sweep_stale
    from agent_evals.suites.problems import did_you_mean

# Imported on first use (PEP 562), so that a check's process, which imports its pack and hence this
# module, stays small: the agent package loads pydantic and its SDKs, the golden plans YAML, the live
# routes FastAPI and the agent, the runner's modules and the suites' problems what a run needs.
_ON_FIRST_USE = {
    "load_agent_config": "agent_evals.agent.config",
    "mcp_tool_to_spec": "agent_evals.agent.mcp_sdk",
    "precompile_output_validators": "agent_evals.agent.mcp_sdk",
    "resolve_servers": "agent_evals.agent.mcp_servers",
    "StdioServer": "agent_evals.agent.mcp_servers",
    "Live": "agent_evals.golden.plan",
    "PlanError": "agent_evals.golden.plan",
    "Unavailable": "agent_evals.golden.plan",
    "CassetteTape": "agent_evals.golden.selfcheck",
    "edit_tool_arguments": "agent_evals.golden.selfcheck",
    "live_routers": "agent_evals.live.routers",
    "ForcedExit": "agent_evals.runner.interrupts",
    "run_of": "agent_evals.runner.sweep",
    "stale_data_dirs": "agent_evals.runner.sweep",
    "stale_runs": "agent_evals.runner.sweep",
    "sweep_stale": "agent_evals.runner.sweep",
    "did_you_mean": "agent_evals.suites.problems",
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
    "PlanError",
    "PlanValues",
    "Unavailable",
    "UserFraming",
    "did_you_mean",
    "edit_tool_arguments",
    # a scripted agent for the pack's tests
    "CONFIRM",
    "THANKS",
    "ConversationScript",
    "Reply",
    "Step",
    "tool_result",
    # the system under test
    "CleanupReport",
    "Conversation",
    "FixtureError",
    "Running",
    "SideEffect",
    "System",
    "SystemFailure",
    "SystemNotConfigured",
    "SystemPool",
    "SystemSetupError",
    "SystemUnavailable",
    "ToolSpec",
    "UndoWords",
    "metadata_of_row",
    "trace_of_row",
    # its processes, the suites it serves, the runs that died (imported on first use: the runner's)
    "COLD",
    "ForcedExit",
    "KitStarter",
    "ProcessRef",
    "Shard",
    "Suite",
    "default_data_dir",
    "discover_suites",
    "kit_command",
    "pause_point",
    "pid_alive",
    "run_of",
    "runs_dir",
    "select_suites",
    "stale_data_dirs",
    "stale_runs",
    "start_detached",
    "suite_eval_id",
    "sweep_stale",
    # a web backend's live-evaluation routes (imported on first use)
    "live_routers",
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
    # helpers of checks on JSON documents
    "REMOVED",
    "BadSchema",
    "ChangeReport",
    "EntryOutcome",
    "ExpectedChange",
    "PointerError",
    "SchemaIssue",
    "check_changes",
    "expected_document",
    "leaf_diff",
    "render",
    "schema_issues",
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
    "precompile_output_validators",
    "resolve_servers",
]
