"""Synthetic Promptfoo results in the ``-o results.json`` shape (Promptfoo 0.123.1), for tests
and benchmarks of the report: rows with the kit's run record, assertion entries and named
scores, and files ``promptfoo import`` accepts::

    rows = [result_row("C01", 0, "pass"), result_row("C01", 1, "fail", failing=[("tool_sequence", "…")])]
    data = results_file(rows, eval_id="eval-test-1")

An ``invalid`` row is the provider's answer when the simulated user spoiled the conversation
(an error row whose record's ``user_review`` has ``findings``); an ``incomplete`` one failed
only on a deciding check that was NOT GRADED (``undecided``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

Outcome = Literal["pass", "fail", "error", "invalid", "incomplete"]
AGENT = {"name": "agent", "model": "agent-model", "temperature": 0.2, "instructions_sha256": "ab" * 32}
PROVIDER_ID = "file://../../providers/agent.py"
_TOKEN_USAGE = {"prompt": 0, "completion": 0, "cached": 0, "total": 0, "numRequests": 1}


def result_row(
    case_id: str,
    test_idx: int,
    outcome: Outcome = "pass",
    *,
    group: str | None = "copy",
    priority: str | None = "smoke",
    provider: str = "agent",
    passing: Sequence[str] = ("pull_request",),
    failing: Sequence[tuple[str, str]] = (),
    error_kind: str = "model",
    error: str = "the agent's model failed",
    end: str | None = None,
    turns: int = 2,
    tool_calls: Sequence[str] = ("get_item", "open_ticket"),
    usage: Mapping[str, Mapping[str, float]] | None = None,
    named_scores: Mapping[str, float] | None = None,
    not_graded: Sequence[str] = (),
    agent: Mapping[str, Any] | None = None,
    description: str | None = None,
    record: bool = True,
    test_id: bool = True,
    padding: int = 0,
    findings: Sequence[tuple[str, int, str]] = (),
    undecided: Sequence[str] = ("the judge's reply was not a verdict, twice: 'Sure!'",),
    user: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One row. ``passing`` are metrics of passed assertion entries, ``failing`` (metric, reason)
    pairs of failed ones; an ``error`` row has no grading. ``padding`` adds that many characters
    of transcript (to make rows as large as real ones). ``findings`` ``(check, turn, evidence)`` are
    the user checks' (an ``invalid`` row needs one); ``user`` the record's ``{kind, model}``."""
    if outcome == "invalid":
        findings = findings or (("invented_fact", 2, "the user invented region 'westus9' (not in its facts)"),)
        error_kind, error = "user_simulator", f"invalid: {case_id} turn {findings[0][1]}, {findings[0][2]}"
    graded = outcome not in ("error", "invalid")
    components = [_component(metric, True, f"{metric}: ok") for metric in passing]
    components += [_component(metric, False, reason) for metric, reason in failing]
    components += [_component("", True, f"NOT GRADED: {item}") for item in not_graded]
    if outcome == "incomplete":
        components += [_component("statements", False, f"NOT GRADED: expected_statements: {why}") for why in undecided]
    scores = dict(named_scores or {m: 1.0 for m in passing} | {m: 0.0 for m, _ in failing}) if graded else {}
    meta = (
        {"id": case_id, "group": group, "priority": priority}
        if test_id
        else {"group": group, "priority": priority}
    )
    meta = {k: v for k, v in meta.items() if v is not None}
    row: dict[str, Any] = {
        "cost": 0,
        "gradingResult": None
        if not graded
        else {
            "pass": outcome == "pass",
            "score": 1.0 if outcome == "pass" else 0.0,
            "reason": "All assertions passed"
            if outcome == "pass"
            else (failing[0][1] if failing else "failed"),
            "namedScores": scores,
            "namedScoreWeights": {name: 1 for name in scores},
            "tokensUsed": {"total": 0, "prompt": 0, "completion": 0, "cached": 0, "numRequests": 0},
            "componentResults": components,
        },
        "id": hashlib.sha1(f"{case_id}-{test_idx}-{provider}".encode()).hexdigest(),
        "latencyMs": 1200,
        "namedScores": scores,
        "prompt": {"raw": f"request of {case_id}", "label": "{{ simulated_user.goal }}"},
        "promptId": "p" * 64,
        "promptIdx": 0,
        "provider": {"id": PROVIDER_ID, "label": provider},
        "response": {
            "output": f"User: … ({case_id})",
            "tokenUsage": _TOKEN_USAGE,
            "cost": 0,
            "cached": False,
        },
        "score": 1.0 if outcome == "pass" else 0.0,
        "success": outcome == "pass",
        "testCase": {
            "description": description if description is not None else f"{case_id} a synthetic case",
            "metadata": meta,
            "vars": {"simulated_user": {"goal": f"goal of {case_id}"}},
            "assert": [
                {"type": "python", "value": "file://../../assertions/x.py", "metric": m} for m in passing
            ],
        },
        "testIdx": test_idx,
        "tokenUsage": _TOKEN_USAGE,
        "vars": {"simulated_user": {"goal": f"goal of {case_id}"}},
        "metadata": {**meta, **({"not_graded": list(not_graded)} if not_graded else {})},
        "failureReason": {"pass": 0, "fail": 1, "error": 2, "invalid": 2, "incomplete": 1}[outcome],
    }
    if outcome != "pass":
        row["error"] = f"[{error_kind}] {error}" if not graded else row["gradingResult"]["reason"]
    if record:
        row["response"]["metadata"] = _record(
            case_id, outcome, error_kind, error, end, turns, tool_calls, usage, agent, padding
        )
        row["response"]["metadata"]["user"] = dict(user or {"kind": "simulated_user", "model": "user-model"})
        row["response"]["metadata"]["user_review"] = _user_review(findings, user, errored=outcome == "error")
        row["metadata"].update({k: v for k, v in row["response"]["metadata"].items() if k != "snapshot"})
    return row


def _user_review(findings: Sequence[tuple[str, int, str]], user: Mapping[str, Any] | None, *,
                 errored: bool = False) -> dict[str, Any]:
    if (user or {}).get("kind") in ("user_messages", "single_turn"):
        return {"invalid": False, "findings": [], "undecided": [], "skipped": "fixed user messages: no user checks apply"}
    if errored:
        return {"invalid": False, "findings": [], "undecided": [], "skipped": "the conversation ended in an error"}
    return {
        "invalid": bool(findings),
        "findings": [{"check": c, "turn": t, "evidence": e, "by": "rule"} for c, t, e in findings],
        "undecided": [],
    }


def _component(metric: str, passed: bool, reason: str) -> dict[str, Any]:
    assertion: dict[str, Any] = {"type": "python", "value": "file://../../assertions/x.py"}
    if metric:
        assertion["metric"] = metric
    return {"pass": passed, "score": 1.0 if passed else 0.0, "reason": reason, "assertion": assertion}


def _record(
    case_id: str,
    outcome: Outcome,
    error_kind: str,
    error: str,
    end: str | None,
    turns: int,
    tool_calls: Sequence[str],
    usage: Mapping[str, Mapping[str, float]] | None,
    agent: Mapping[str, Any] | None,
    padding: int,
) -> dict[str, Any]:
    usage = usage or {
        "agent": {"prompt_tokens": 1000, "completion_tokens": 100, "calls": 3, "cost": 0.01},
        "user": {"prompt_tokens": 300, "completion_tokens": 20, "calls": 2, "cost": 0.001},
    }
    roles = {}
    for role in ("agent", "user", "judge"):
        u = dict(usage.get(role) or {})
        u.setdefault("total_tokens", int(u.get("prompt_tokens", 0)) + int(u.get("completion_tokens", 0)))
        roles[role] = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0, "cost": 0.0, **u}
    ended = end or ("error" if outcome == "error" else "done")
    return {
        "agent_evals": 3,
        "case_id": case_id,
        "agent": dict(agent or AGENT),
        "user": {"kind": "simulated_user", "model": "user-model"},
        "turns": turns,
        "transcript": [{"role": "user", "content": "x" * padding, "turn": 1, "tool_calls": []}],
        "tool_calls": [
            {
                "id": f"call_{i}",
                "name": name,
                "arguments": {"name": "billing"},
                "raw_arguments": "{}",
                "outcome": "ok",
                "is_error": False,
                "result": {"ok": True},
                "turn": 1,
                "index": i + 1,
                "duration_ms": 5.0,
            }
            for i, name in enumerate(tool_calls)
        ],
        "side_effects": [],
        "conversation_end": ended,
        "ended_by": {"done": "user", "gave_up": "user", "error": "error"}.get(ended, "limit"),
        "error_kind": error_kind if outcome == "error" else None,
        "error": error if outcome == "error" else None,
        "final_reply": "Done.",
        "usage": roles,
        "trace": {"eval_id": "run-synthetic", "test_id": f"{case_id}#0"},
        "snapshot": {"read_from": "http://127.0.0.1:1", "resources": {"pull_requests": []}},
    }


def results_file(
    rows: Iterable[Mapping[str, Any]],
    *,
    eval_id: str = "eval-synthetic-2026-01-01T00:00:00",
    description: str = "synthetic results",
    created_at: str = "2026-01-01T00:00:00.000Z",
    finished: bool = True,
) -> dict[str, Any]:
    """A whole ``-o`` file; ``finished`` False leaves out ``stats`` (never written by Promptfoo)."""
    rows = list(rows)
    results: dict[str, Any] = {
        "version": 3,
        "timestamp": created_at,
        "prompts": [
            {
                "raw": "{{ simulated_user.goal }}",
                "label": "{{ simulated_user.goal }}",
                "provider": "agent",
                "id": "p" * 64,
                "metrics": {},
            }
        ],
        "results": rows,
    }
    if finished:
        results["stats"] = {
            "successes": sum(1 for r in rows if r["failureReason"] == 0),
            "failures": sum(1 for r in rows if r["failureReason"] == 1),
            "errors": sum(1 for r in rows if r["failureReason"] == 2),
            "tokenUsage": _TOKEN_USAGE,
            "durationMs": 1000,
        }
    return {
        "evalId": eval_id,
        "results": results,
        "config": {
            "description": description,
            "providers": [{"id": PROVIDER_ID, "label": "agent"}],
            "tests": [
                {"description": row["testCase"]["description"], "vars": row["vars"]} for row in rows[:3]
            ],
        },
        "shareableUrl": None,
        "metadata": {
            "promptfooVersion": "0.123.1",
            "exportedAt": created_at,
            "evaluationCreatedAt": created_at,
        },
        "vars": ["simulated_user"],
        "runtimeOptions": {},
    }
