"""The report's types: what was read (:class:`EvalInfo`, :class:`RunInfo`) and what it says
(:class:`CaseSummary`, :class:`GroupSummary`, :class:`MetricSummary`, :class:`Pattern`,
:class:`Report`). Plain frozen data; :mod:`agent_evals.report.format_json` is their JSON form."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_evals.record import AgentInfo, Role, Usage
from agent_evals.report.rows import Grader

Verdict = Literal["pass", "fail", "flaky", "error", "invalid", "incomplete"]
"""A case over its runs: every graded run passed, none did, some did (flaky), or no run was graded:
because of errors, of a simulated user that spoiled every run (invalid), or of a deciding check
that could not be graded (incomplete)."""
Direction = Literal["higher", "lower"]
PatternKind = Literal["metric", "tool", "path"]


@dataclass(frozen=True)
class RunInfo:
    """One ``agent-evals run`` as its manifest recorded it."""

    run_id: str
    mode: str
    git_revision: str | None = None
    finished: bool = True
    interrupted: bool = False
    alive: bool = False  # not finished, and its process still runs
    suites_not_run: tuple[str, ...] = ()
    budget: Mapping[str, Any] | None = None  # the --budget-usd ledger at the run's end


@dataclass(frozen=True)
class EvalInfo:
    """One Promptfoo eval that was read, and what the kit's run manifest says about it."""

    eval_id: str
    source: str  # "database" or the file's path
    description: str = ""
    created_at: str | None = None
    finished: bool = True  # the eval ran to its end (DB durationMs, or the file's stats)
    rows: int = 0
    suite: str | None = None
    run_id: str | None = None
    mode: str | None = None  # live, replay, record (manifest); else "replay" when every row replayed
    git_revision: str | None = None
    interrupted: bool = False
    selected: tuple[str, ...] | None = None
    repeat: int | None = None
    providers: int | None = None
    shards: tuple[int, ...] | None = None  # the shards of a sharded run this eval holds (merged: several)
    shard_count: int | None = None  # N of --shard I/N
    shards_planned: tuple[int, ...] | None = None  # the shards the plan gives a case to
    shard_run: str | None = None  # what the shards of one sharded run share (their stamp's fingerprint)
    budget: Mapping[str, Any] | None = None  # the suite's own budget_usd ledger at its end
    until_decided: Mapping[str, Any] | None = None  # --repeat-until-decided: max, rounds, runs and planned per case
    attempt: int = 1  # 2, 3, …: an eval that re-ran a suite's invalid rows (--rerun-invalid)


@dataclass(frozen=True)
class RunLabel:
    """What one side of a comparison ran."""

    agents: tuple[tuple[str, AgentInfo], ...] = ()  # (provider, agent) pairs
    modes: tuple[str, ...] = ()
    git_revisions: tuple[str, ...] = ()
    eval_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunFailure:
    """The first failing check of one failed run."""

    eval_id: str
    test_idx: int
    metric: str
    reason: str


@dataclass(frozen=True)
class CaseSummary:
    id: str
    provider: str
    group: str | None
    priority: str | None
    suite: str | None
    runs: int
    passed: int
    failed: int
    errors: int
    k: int | None
    pass_hat_k: float | None
    pass_rate: float | None
    flaky: bool
    verdict: Verdict
    ends: Mapping[str, int]
    error_kinds: Mapping[str, int]
    mean_turns: float | None
    mean_tool_calls: float | None
    usage: Mapping[Role, Usage]
    not_graded: int
    first_failure: str | None
    failures: tuple[RunFailure, ...] = ()
    first_error: str | None = None
    id_source: str = "record"
    mean_latency_ms: float | None = None  # a run's time (Promptfoo's latencyMs): what shards balance on
    not_graded_deciding: int = 0  # of not_graded: checks that would decide the row (weight > 0)
    graders: tuple[Grader, ...] = ()  # the graders of its kit checks, each once (several: they differ between runs)
    invalid: int = 0  # runs the simulated user spoiled, on every attempt (neither pass nor fail)
    incomplete: int = 0  # runs a deciding check of could not be graded (neither pass nor fail)
    attempts: int = 0  # rows that ran, re-runs of invalid ones included (0: as many as runs)

    @property
    def key(self) -> tuple[str, str]:
        return (self.provider, self.id)


@dataclass(frozen=True)
class GroupSummary:
    """The cases of one group, one priority, or all of them, aggregated."""

    name: str
    cases: int
    runs: int
    passed: int
    failed: int
    errors: int
    flaky: int
    pass_hat_k: float | None  # the mean of its cases' pass^k
    pass_rate: float | None
    ends: Mapping[str, int]
    mean_turns: float | None
    mean_tool_calls: float | None
    usage: Mapping[Role, Usage]
    not_graded: int
    case_ids: tuple[str, ...] = ()
    invalid: int = 0
    incomplete: int = 0


@dataclass(frozen=True)
class MetricSummary:
    name: str
    direction: Direction
    mean: float | None
    pass_rate: float | None  # of the assertions with this metric; None for a score no assertion owns
    rows: int


@dataclass(frozen=True)
class Pattern:
    """Failures that share a metric, a tool or a JSON path."""

    kind: PatternKind
    name: str
    cases: tuple[str, ...]
    runs: int
    metrics: tuple[str, ...] = ()


@dataclass(frozen=True)
class LedgerSummary:
    """One budget ledger at the end of its run."""

    scope: str  # "run" (--budget-usd) or "suite <name>" (its budget_usd)
    limit_usd: float
    spent_usd: float
    calls: int
    refused: int  # model calls not sent because the limit was reached
    cost_by_role: Mapping[Role, float]


@dataclass(frozen=True)
class BudgetSummary:
    ledgers: tuple[LedgerSummary, ...]
    stopped_cases: tuple[str, ...]  # cases with a run the budget stopped (an error of kind budget)
    stopped_runs: int


@dataclass(frozen=True)
class Blessing:
    """What ``agent-evals baseline bless`` recorded: when and from what a baseline was made."""

    blessed_at: str  # 2026-12-01T10:00:00Z
    git_revision: str | None
    suites: tuple[str, ...]
    agents: tuple[str, ...]  # agent names
    models: tuple[str, ...]  # the agents' models
    modes: tuple[str, ...]
    runs_per_case: int  # the fewest graded runs of a case
    graders: tuple[str, ...] = ()  # "check vN" of every kit check that graded its rows
    eval_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class InvalidRun:
    """A run the simulated user spoiled at least once: its attempts and how it ended up."""

    case_id: str
    provider: str
    reason: str  # the first invalid attempt's "turn 2, the user invented region 'westus9' (…)"
    attempts: int  # 1 + its re-runs
    outcome: str  # its last attempt's outcome: "invalid" (on every attempt), "pass", "fail", …
    suite: str | None = None


@dataclass(frozen=True)
class SimulatorQuality:
    """How often one simulated user (a suite and a user model) spoiled its conversations, by check."""

    suite: str
    user_model: str
    conversations: int  # checked (every attempt; fixed messages are not)
    flagged: int  # with a finding
    by_check: Mapping[str, int]  # conversations with a finding of each check
    undecided: int = 0  # conversations where a check could not decide
    errors: int = 0  # conversations that broke off on the simulated user (error kind user_simulator)

    @property
    def share(self) -> float:
        return self.flagged / self.conversations if self.conversations else 0.0


@dataclass(frozen=True)
class Report:
    complete: bool
    incomplete: tuple[str, ...]
    k: int | None  # the --k asked for; None: each case's runs
    cases: tuple[CaseSummary, ...]
    groups: tuple[GroupSummary, ...]
    priorities: tuple[GroupSummary, ...]
    totals: GroupSummary
    metrics: tuple[MetricSummary, ...]
    patterns: tuple[Pattern, ...]
    errors_by_kind: Mapping[str, int]
    usage: Mapping[Role, Usage]
    evals: tuple[EvalInfo, ...]
    runs: tuple[RunInfo, ...]
    label: RunLabel
    notes: tuple[str, ...] = field(default=())
    budget: BudgetSummary | None = None
    blessed: Blessing | None = None  # a blessed baseline's record (agent-evals baseline bless)
    invalid_runs: tuple[InvalidRun, ...] = ()  # every run the simulated user spoiled, with its re-runs
    simulator: tuple[SimulatorQuality, ...] = ()  # per suite and user model
    fixed_user_rows: int = 0  # rows with fixed user messages (no user checks apply)

    @property
    def cost(self) -> float:
        return round(sum(usage.cost for usage in self.usage.values()), 8)
