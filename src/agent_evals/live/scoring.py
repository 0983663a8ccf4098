"""Scoring one real conversation with its agent's policy: the same checks, on the same run record.

Outcomes, as in the evaluations (an error is never a failure):

* **error** (not graded): the conversation ended in an error (the model or the portal failed, or
  it was cut off by a crash: kind ``cut_off``); its agent has no policy, or its version is not one
  the policy covers (kind ``config``, saying so: labelled, not mis-scored); the end state or the
  judge could not be read (``system``, ``model``); or nothing the policy asks could be graded;
* **fail**: a check failed; **pass**: every check that applies passed.

A check with ``when: {called: [...]}`` applies only to conversations that called one of those
tools (the others leave it out: it is neither passed nor failed). Checks of a pack read the end
state: the pull requests the conversation created or linked and the pack's resources, read from
the portal (:class:`LiveSnapshots`; the resources once per run); without a portal they are NOT
GRADED. The judged checks ask the judge model (``goal_reached``: the goal inferred from the
user's own messages; ``trajectory_quality``: the route on its own merits); without one they are
NOT GRADED, never passed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_evals.assertions.names import first_match
from agent_evals.assertions.registry import pack_of
from agent_evals.suites.check_ref import CheckRef
from agent_evals.live.policy import AgentPolicy, Policy, PolicyCheck
from agent_evals.live.stored import StoredConversation
from agent_evals.packs import Pack, load_pack
from agent_evals.provider.grading import grade_checks
from agent_evals.record import End, KitError, RunRecord, Snapshot, Trace
from agent_evals.record.row_labels import NOT_GRADED

Outcome = Literal["pass", "fail", "error"]


@dataclass
class Scored:
    conversation: StoredConversation
    record: RunRecord
    outcome: Outcome
    results: list[dict[str, Any]] = field(default_factory=list)  # graded checks, as metadata.checks holds them
    not_graded: list[str] = field(default_factory=list)  # "metric: why"
    not_applicable: list[str] = field(default_factory=list)
    error_kind: str | None = None
    error: str | None = None
    stratum: str | None = None
    metadata: dict[str, Any] | None = None  # the record's metadata form, as graded


class LiveSnapshots:
    """The end state of production conversations, read through each agent's pack's system (``env``:
    what reaches it, e.g. ``PORTAL_URL`` and ``PORTAL_TOKEN``): the side effects the conversation
    made or linked, and what the checks read; no trace to find more by."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = dict(env)

    def take(self, record: RunRecord, pack: Pack, refs: Sequence[CheckRef]) -> Snapshot | None:
        return pack.system.conversation(Trace("live", ""), self.env).snapshot(record, refs)


class Scorer:
    def __init__(self, policy: Policy, *, snapshots: LiveSnapshots | None = None, judge: bool = False) -> None:
        self.policy = policy
        self.snapshots = snapshots
        self.judge = judge

    def score(self, conversation: StoredConversation, stratum: str | None = None) -> Scored:
        record = conversation.run_record()
        agent = self.policy.agents.get(conversation.agent.name)
        if agent is None:
            known = ", ".join(self.policy.agents) or "none"
            return _error(conversation, record, "config", f"not scored: agent {conversation.agent.name!r} has no "
                          f"policy in {self.policy.path} (it has: {known})", stratum)
        if not agent.covers(record.agent):
            version = f"model {record.agent.model}, instructions {record.agent.instructions_sha256[:12]}…"
            return _error(conversation, record, "config", f"not scored: {agent.agent}'s version ({version}) is not one "
                          f"{self.policy.path} covers ({agent.coverage()})", stratum)
        end = record.end or End.failed("internal", "the conversation has no end")
        if end.reason == "error":
            return _error(conversation, record, end.error_kind or "internal", end.error or "", stratum)
        try:
            return self._graded(conversation, record, agent, stratum)
        except KitError as exc:
            return _error(conversation, record, exc.kind, str(exc), stratum)

    def _graded(self, conversation: StoredConversation, record: RunRecord, agent: AgentPolicy,
                stratum: str | None) -> Scored:
        names = [c.name for c in record.tool_calls]
        applicable = [c for c in agent.checks if not c.called or any(first_match(n, c.called) for n in names)]
        skipped = [f"{c.metric}: no call of {', '.join(c.called)}" for c in agent.checks if c not in applicable]
        refs = [c.ref(position) for position, c in enumerate(applicable)]
        pack = load_pack(agent.pack)
        not_graded: list[str] = []
        needs_state = [c for c in applicable if pack_of(c.name, pack) is not None]
        if needs_state and self.snapshots is not None:
            record.snapshot = self.snapshots.take(record, pack, refs)
        elif needs_state:
            not_graded += [f"{c.metric}: needs the end state from the portal (score with --portal)" for c in needs_state]
        judged = [c for c in applicable if c.judged]
        if judged:
            record.judged = asyncio.run(_judge(judged, record)) if self.judge else []
            if not self.judge:
                not_graded += [f"{c.metric}: no judge model is configured (JUDGE_MODEL and an LLM endpoint)" for c in judged]
        graded_refs = [r for r, c in zip(refs, applicable, strict=True)
                       if not any(line.startswith(f"{c.metric}: ") for line in not_graded)]
        metadata = record.to_metadata()
        results = grade_checks(graded_refs, [c.assertion() for c in applicable], metadata, pack)
        for result in [r for r in results if str(r["reason"]).startswith(NOT_GRADED)]:
            why = str(result["reason"]).removeprefix(f"{NOT_GRADED}: ").removeprefix(f"{result['name']}: ")
            not_graded.append(f"{result['metric']}: {why.split('; this check did not run')[0]}")
            results.remove(result)
        if not results:
            return _error(conversation, record, "config", "nothing the policy asks could be graded: "
                          + "; ".join(not_graded or skipped or ["no check applies"]), stratum)
        outcome: Outcome = "pass" if all(r["pass"] for r in results) else "fail"
        return Scored(conversation, record, outcome, results, not_graded, skipped, stratum=stratum, metadata=metadata)


async def _judge(checks: Sequence[PolicyCheck], record: RunRecord) -> list[Any]:
    from agent_evals.conversation.metering import MeteredModels  # lazy: keeps agent_evals.live.command's start-up as small as it is
    from agent_evals.conversation.modes import LiveMode  # lazy: loads pydantic only when used (start-up time)
    from agent_evals.judging import JudgedCheck, judge_conversation  # lazy: loads pydantic only when used (start-up time)
    from agent_evals.llm.source import LiveModels  # lazy: keeps agent_evals.live.command's start-up as small as it is

    models = MeteredModels(LiveModels(), record)
    try:
        return await judge_conversation([JudgedCheck(c.name, c.config) for c in checks], record, goal=None,
                                        mode=LiveMode(), models=models)
    finally:
        await models.aclose()


def _error(conversation: StoredConversation, record: RunRecord, kind: str, message: str, stratum: str | None) -> Scored:
    return Scored(conversation, record, "error", error_kind=kind, error=message, stratum=stratum)

