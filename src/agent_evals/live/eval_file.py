"""The scored sample as a Promptfoo eval: one row per real conversation, in the same viewer as the runs.

The rows are scored in Python, not run through ``promptfoo eval``; they are written as the
``-o results.json`` file Promptfoo writes (as ``agent-evals merge`` does) and imported into the
results database with ``promptfoo import``. Each row carries what the viewer and
``agent-evals report`` read from a kit row:

* ``testCase``: the description (the agent, the conversation's start, its first message), the
  metadata (``id``: the conversation id, ``group``: the agent, ``live: true``, the day, the
  user's rating, the stratum that picked it) and the policy's checks as ``assert`` entries;
* ``response.output``: the conversation as the kit's rows show it; ``response.metadata``: the run
  record (the same one the evaluations write) with ``checks``, and ``live`` (rating, times, stratum);
* ``gradingResult``: one entry per graded check with its metric, score and reason; a check that
  could not be graded is a ``NOT GRADED`` entry of weight 0 (in no score), listed in
  ``metadata.not_graded``; an error row (``failureReason`` 2) has none and its ``error`` starts
  with its kind, ``[cut_off] …``.

The eval's description starts with ``LIVE`` and says the window, the agents and the sample, so
live evals are told apart from test runs; ``config.metadata.agentEvals`` holds the same as data
(``agent-evals/live@1``). The same sample (window, agents, options, policy) gets the same eval id:
scoring it again replaces it in the viewer. Rows are written one at a time.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agent_evals.conversation.transcript import render_output
from agent_evals.live.live_report import Facts, facts_of
from agent_evals.live.scoring import Scored
from agent_evals.live.stored import iso

FORMAT = "agent-evals/live@1"
PROVIDER = {"id": "agent-evals:live", "label": "live"}
PROMPT_RAW = "{{conversation}}"
PROMPT_ID = hashlib.sha256(PROMPT_RAW.encode()).hexdigest()
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_FIRST_MESSAGE = 80
_ROW_METADATA = ("agent_evals", "case_id", "agent", "turns", "conversation_end", "ended_by", "error_kind", "error", "usage")


@dataclass
class _Totals:
    successes: int = 0
    failures: int = 0
    errors: int = 0
    prompt: int = 0
    completion: int = 0
    cost: float = 0.0
    score: float = 0.0
    asserts_passed: int = 0
    asserts_failed: int = 0
    named: dict[str, float] = field(default_factory=dict)
    named_counts: dict[str, int] = field(default_factory=dict)


class EvalWriter:
    """Writes the eval file row by row: ``with EvalWriter(path, description, stamp) as out: out.add(scored)``."""

    def __init__(self, path: Path, description: str, stamp: Mapping[str, Any]) -> None:
        self.path = path
        self.description = description
        self.stamp = dict(stamp)
        self.created = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + ".000Z"
        self.eval_id = eval_id(json.dumps(self.stamp, sort_keys=True), self.created)
        self.rows = 0
        self._totals = _Totals()
        self._handle: IO[str] | None = None
        self._tmp = path.with_name(path.name + ".writing")

    def __enter__(self) -> EvalWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = self._tmp.open("w", encoding="utf-8")
        self._handle.write('{\n  "evalId": ' + json.dumps(self.eval_id) + ',\n  "results": {\n    "version": 3,\n'
                           f'    "timestamp": {json.dumps(self.created)},\n    "results": [')
        return self

    def add(self, text: str, facts: Facts) -> None:
        """Write one row (:func:`scored_row`'s text) and count it in the eval's totals."""
        assert self._handle is not None
        self._count(facts)
        self._handle.write(("\n" if self.rows == 0 else ",\n") + text)
        self.rows += 1

    def __exit__(self, exc_type: type[BaseException] | None, *_: Any) -> None:
        assert self._handle is not None
        if exc_type is not None:
            self._handle.close()
            self._tmp.unlink(missing_ok=True)
            return
        self._handle.write(("\n    " if self.rows else "") + "],\n")
        tail = {"prompts": [self._prompt()], "stats": self._stats()}
        body = json.dumps(tail, indent=2, ensure_ascii=False)[1:-1].strip("\n")
        self._handle.write(textwrap.indent(body, "  ") + "\n  },\n")
        rest = json.dumps(self._document(), indent=2, ensure_ascii=False)[1:-1].strip("\n")
        self._handle.write(rest + "\n}\n")
        self._handle.close()
        self._tmp.replace(self.path)

    # -- totals ------------------------------------------------------------------------------
    def _count(self, facts: Facts) -> None:
        totals = self._totals
        if facts.outcome == "error":
            totals.errors += 1
        elif facts.outcome == "pass":
            totals.successes += 1
        else:
            totals.failures += 1
        for usage in facts.usage.values():
            totals.prompt += usage.prompt_tokens
            totals.completion += usage.completion_tokens
            totals.cost += usage.cost
        totals.score += facts.score
        totals.asserts_passed += facts.asserts_passed
        totals.asserts_failed += facts.asserts_failed
        for name, value in facts.named_scores.items():
            totals.named[name] = totals.named.get(name, 0.0) + value
            totals.named_counts[name] = totals.named_counts.get(name, 0) + 1

    def _tokens(self) -> dict[str, int]:
        t = self._totals
        return {"prompt": t.prompt, "completion": t.completion, "cached": 0, "total": t.prompt + t.completion,
                "numRequests": self.rows}

    def _prompt(self) -> dict[str, Any]:
        t = self._totals
        return {
            "raw": PROMPT_RAW, "label": "real conversation", "provider": PROVIDER["label"], "id": PROMPT_ID,
            "metrics": {
                "score": t.score, "testPassCount": t.successes, "testFailCount": t.failures,
                "testErrorCount": t.errors, "assertPassCount": t.asserts_passed, "assertFailCount": t.asserts_failed,
                "totalLatencyMs": 0, "tokenUsage": self._tokens(), "namedScores": t.named,
                "namedScoresCount": t.named_counts, "cost": round(t.cost, 8),
            },
        }

    def _stats(self) -> dict[str, Any]:
        t = self._totals
        return {"successes": t.successes, "failures": t.failures, "errors": t.errors, "tokenUsage": self._tokens(),
                "durationMs": 0}

    def _document(self) -> dict[str, Any]:
        return {
            "config": {"description": self.description, "providers": [PROVIDER], "prompts": [PROMPT_RAW],
                       "metadata": {"agentEvals": self.stamp}},
            "shareableUrl": None,
            "metadata": {"promptfooVersion": "0.123.1", "evaluationCreatedAt": self.created, "exportedAt": self.created},
            "vars": ["conversation", "agent", "started"],
            "runtimeOptions": {},
        }


def scored_row(scored: Scored, index: int) -> tuple[str, Facts]:
    """The row of a scored conversation, as text for the eval file, and its facts for the report."""
    row = build_row(scored, index)
    return row_text(row), facts_of(scored, row)


def row_text(row: Mapping[str, Any]) -> str:
    """The row in the layout Promptfoo writes (``      {`` … ``      }``, keys at eight spaces), which the
    report's and the merge's readers split without parsing the file whole; each value is written compact
    (by the C encoder: an indented dump is five times slower)."""
    items = ",\n".join(f"        {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}" for key, value in row.items())
    return f"      {{\n{items}\n      }}"


def eval_id(fingerprint: str, created: str) -> str:
    """Promptfoo's form ``eval-XyZ-2026-01-01T10:00:00``; the same sample gets the same code."""
    digest = hashlib.sha256(fingerprint.encode()).digest()
    return f"eval-{''.join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:3])}-{created[:19]}"


def build_row(scored: Scored, index: int) -> dict[str, Any]:
    conversation, record = scored.conversation, scored.record
    first = (record.turns[0].user if record.turns else record.pending.user if record.pending else "").strip()
    first = " ".join(first.split())
    shown = first if len(first) <= _FIRST_MESSAGE else first[: _FIRST_MESSAGE - 1] + "…"
    started = iso(conversation.created_at)
    rating = conversation.feedback.rating if conversation.feedback else None
    test_meta: dict[str, Any] = {"id": conversation.id, "group": conversation.agent.name, "live": True,
                                 "day": started[:10]}
    if rating:
        test_meta["rating"] = rating
    if scored.stratum:
        test_meta["stratum"] = scored.stratum
    if scored.not_graded:
        test_meta["not_graded"] = list(scored.not_graded)
    live = {"conversation_id": conversation.id, "started_at": started, "updated_at": iso(conversation.updated_at),
            "status": conversation.effective_status(), "rating": rating,
            "comment": conversation.feedback.comment if conversation.feedback else None, "stratum": scored.stratum,
            "not_applicable": list(scored.not_applicable)}
    metadata = {**(scored.metadata or record.to_metadata()), "live": live}
    if isinstance(metadata.get("snapshot"), Mapping):  # the pack's resources (a schema…) are the same in every row
        metadata["snapshot"] = {**metadata["snapshot"], "resources": {}}
    if scored.outcome != "error":
        metadata["checks"] = scored.results
    usage = record.total_usage()
    tokens = {"prompt": usage.prompt_tokens, "completion": usage.completion_tokens, "cached": 0,
              "total": usage.total_tokens, "numRequests": usage.calls}
    vars_ = {"conversation": shown, "agent": conversation.agent.name, "started": started}
    row: dict[str, Any] = {
        "cost": usage.cost,
        "id": hashlib.sha1(f"{conversation.id}".encode()).hexdigest(),
        "latencyMs": _duration_ms(conversation),
        "prompt": {"raw": shown, "label": PROMPT_RAW},
        "promptId": PROMPT_ID,
        "promptIdx": 0,
        "provider": PROVIDER,
        "response": {"output": render_output(record), "tokenUsage": tokens, "cost": usage.cost, "cached": False,
                     "metadata": metadata},
        "testCase": {"description": f"{conversation.agent.name} {started[:16].replace('T', ' ')} {shown}",
                     "metadata": test_meta, "vars": vars_, "assert": _asserts(scored)},
        "testIdx": index,
        "tokenUsage": tokens,
        "vars": vars_,
        "metadata": {**test_meta, "live": live, **{k: metadata.get(k) for k in _ROW_METADATA if k in metadata}},
    }
    row.update(_grading(scored))
    return row


def _asserts(scored: Scored) -> list[dict[str, Any]]:
    return [{"type": "python", "value": f"file://assertions/{r['name']}.py", "metric": r["metric"],
             **({"config": r["config"]} if r["config"] is not None else {})} for r in scored.results]


def _grading(scored: Scored) -> dict[str, Any]:
    if scored.outcome == "error":
        return {"success": False, "score": 0.0, "namedScores": {}, "gradingResult": None, "failureReason": 2,
                "error": f"[{scored.error_kind}] {scored.error}"}
    components = []
    named: dict[str, float] = {}
    for result in scored.results:
        assertion = {"type": "python", "value": f"file://assertions/{result['name']}.py", "metric": result["metric"]}
        components.append({"pass": result["pass"], "score": result["score"], "reason": result["reason"],
                           "assertion": assertion, "namedScores": result["namedScores"]})
        named[result["metric"]] = result["score"]
        named.update(result["namedScores"])
    for line in scored.not_graded:  # as hooks/kit.js shows a check that cannot be graded: weight 0, no metric
        reason = f"NOT GRADED: {line}; this check did not run and counts neither as a pass nor in any score"
        components.append({"pass": True, "score": 0, "reason": reason, "assertion": {"type": "python", "weight": 0}})
    passed = scored.outcome == "pass"
    score = sum(r["score"] for r in scored.results) / len(scored.results)
    first_failure = next((r["reason"] for r in scored.results if not r["pass"]), "All assertions passed")
    out: dict[str, Any] = {
        "success": passed, "score": score, "namedScores": named, "failureReason": 0 if passed else 1,
        "gradingResult": {"pass": passed, "score": score, "reason": first_failure, "namedScores": named,
                          "namedScoreWeights": {name: 1 for name in named}, "componentResults": components,
                          "tokensUsed": {"total": 0, "prompt": 0, "completion": 0, "cached": 0, "numRequests": 0}},
    }
    if not passed:
        out["error"] = first_failure
    return out


def _duration_ms(conversation: Any) -> float:
    return round(max(conversation.updated_at - conversation.created_at, 0.0) * 1000, 1)
