"""One Promptfoo result row, as the report needs it: :class:`Row`, built by :func:`row_from_promptfoo`.

Both readers (the ``-o`` JSON file and the results database) hand over a row in the shape
of the ``-o`` JSON file (``testIdx``, ``testCase``, ``provider``, ``response.metadata``,
``gradingResult``, ``failureReason``, …), possibly with only the keys read here. This
module is pure: no I/O.

- **Outcome**: ``failureReason`` 2 is an *error* (neither a pass nor a fail) — or, when its
  run record says the simulated user spoiled the conversation, *invalid* (neither either) —
  else ``success`` says pass or fail; a failed row whose failing entries are all ``NOT
  GRADED`` (a check that decides the row could not be graded) is *incomplete*.
- **Case id**: the run record's ``case_id``, else ``testCase.metadata.id``, else the
  description's leading id (``C01 …``), else the description itself; ``id_source`` says which.
- **Failures**: the assertion entries with ``pass: false`` in order; entries whose reason
  starts with ``NOT GRADED`` are not failures, they count as not graded — so do entries whose
  grader failed (Promptfoo's ``metadata.graderError``: a model-graded assertion whose grader
  gave no usable reply). Graders fail as graders.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from agent_evals.record import ERROR_KINDS, MARKER, RENAMED_ERROR_KINDS, ROLES, AgentInfo, Role, Usage, upgrade_record
from agent_evals.record.versions import UPGRADABLE
from agent_evals.record.row_labels import INFORMATIVE, NOT_GRADED, leading_case_id
from agent_evals.report.user_rows import NO_USER, UserSide, user_side

Outcome = Literal["pass", "fail", "error", "invalid", "incomplete"]
GRADED: tuple[Outcome, ...] = ("pass", "fail")  # the outcomes pass^k counts
IdSource = Literal["record", "test", "description_id", "description", "index"]
UNKNOWN_KIND = "unknown"  # an error row without a kit error kind (Promptfoo's own, another provider's)
_KIND_PREFIX = re.compile(r"\s*\[([a-z_]+)\]")
_INDEX_ID = re.compile(r"test\d+")
_WORKER_SHUTDOWN = "Worker shutting down"  # the in-flight row of a Ctrl-C (Promptfoo 0.123.1)


class Check(NamedTuple):
    """One graded assertion entry of a row: its metric (else its type), pass, reason."""

    metric: str
    passed: bool
    reason: str


class Grader(NamedTuple):
    """Which grader gave a kit check's verdict (agent_evals.assertions.grader_version): the check,
    its metric, version, config hash, and for a judged check the judge model and rubric hash."""

    check: str
    metric: str
    version: int
    config: str
    judge_model: str = ""
    rubric: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.check, self.metric)


class Row(NamedTuple):
    """One result row (a NamedTuple: immutable, and quick to build by the ten thousand)."""

    eval_id: str
    test_idx: int
    prompt_idx: int
    provider: str
    case_id: str
    id_source: IdSource
    description: str
    group: str | None
    priority: str | None
    outcome: Outcome
    error_kind: str | None
    error: str | None
    checks: tuple[Check, ...]
    named_scores: Mapping[str, float]
    not_graded: tuple[str, ...]
    end: str | None
    turns: int | None
    tool_calls: int | None
    usage: Mapping[Role, Usage]
    agent: AgentInfo | None
    replayed: bool
    cost: float
    latency_ms: float | None = None  # Promptfoo's measured time of the row (the whole conversation)
    graders: tuple[Grader, ...] = ()  # of the kit checks the provider graded (metadata.checks)
    user: UserSide = NO_USER  # who played the user and what the user checks found
    attempt: int = 1  # 2, 3, …: a re-run of invalid rows (agent-evals run --rerun-invalid)

    @property
    def failures(self) -> tuple[Check, ...]:
        return tuple(check for check in self.checks if not check.passed)

    @property
    def first_failure(self) -> Check | None:
        return next(iter(self.failures), None) if self.outcome == "fail" else None


def is_deciding(not_graded: str) -> bool:
    """Whether a ``metadata.not_graded`` entry is of a check that decides the row (weight > 0)."""
    return not not_graded.endswith(INFORMATIVE)


class NotPromptfooRow(ValueError):
    """The row lacks what every Promptfoo result row has."""


def row_from_promptfoo(raw: Mapping[str, Any], eval_id: str, *, tool_calls: int | None = None) -> Row:
    """The :class:`Row` of one result row in the ``-o`` JSON shape. ``tool_calls`` overrides
    the count read from ``response.metadata.tool_calls`` (the database reader counts in SQL)."""
    if not isinstance(raw, dict) or "testIdx" not in raw or not isinstance(raw.get("testCase"), dict):
        raise NotPromptfooRow("a result row without testIdx and testCase")
    test = raw["testCase"]
    test_meta = _mapping(test.get("metadata"))
    record = current_record(_mapping(_mapping(raw.get("response")).get("metadata")))
    row_meta = _mapping(raw.get("metadata"))
    case_id, source = case_identity(record, test_meta, test.get("description"), int(raw["testIdx"]))
    grading = _mapping(raw.get("gradingResult"))
    checks, graded_out, undecided = _checks(grading.get("componentResults"))
    user = user_side(record)
    outcome = _outcome(raw, user, checks, undecided)
    return Row(
        eval_id=eval_id,
        test_idx=int(raw["testIdx"]),
        prompt_idx=int(raw.get("promptIdx") or 0),
        provider=provider_name(raw.get("provider")),
        case_id=case_id,
        id_source=source,
        description=str(test.get("description") or ""),
        group=_text(test_meta.get("group")),
        priority=_text(test_meta.get("priority")),
        outcome=outcome,
        error_kind=error_kind(record, raw.get("error")) if outcome in ("error", "invalid") else None,
        error=_first_line(raw.get("error")) if outcome in ("error", "invalid") else None,
        checks=checks,
        named_scores=_named_scores(raw.get("namedScores"), grading.get("namedScoreWeights"), graded_out),
        not_graded=_not_graded(row_meta.get("not_graded"), graded_out),
        end=_text(record.get("conversation_end")),
        turns=_int(record.get("turns")),
        tool_calls=tool_calls if tool_calls is not None else _count(record.get("tool_calls")),
        usage=_usage(record.get("usage")),
        agent=_agent(record.get("agent")),
        replayed=isinstance(record.get("replay"), dict),
        cost=float(raw.get("cost") or 0.0),
        latency_ms=_number(raw.get("latencyMs")),
        graders=graders_of(record.get("checks")),
        user=user,
    )


def graders_of(checks: Any) -> tuple[Grader, ...]:
    """The grader of each kit check in ``metadata.checks`` that records one (older rows: none)."""
    out = []
    for entry in checks if isinstance(checks, list) else ():
        stamp = entry.get("grader") if isinstance(entry, dict) else None
        if not isinstance(stamp, dict) or not isinstance(stamp.get("version"), int):
            continue
        check = str(stamp.get("check") or entry.get("name"))
        out.append(Grader(check, str(entry.get("metric") or check),
                          stamp["version"], str(stamp.get("config") or ""), str(stamp.get("judge_model") or ""),
                          str(stamp.get("rubric") or "")))
    return tuple(out)


def case_identity(
    record: Mapping[str, Any], test_meta: Mapping[str, Any], description: Any, test_idx: int
) -> tuple[str, IdSource]:
    """The case id of a row and where it came from (see the module docstring)."""
    recorded = _text(record.get("case_id"))
    if recorded and not (_INDEX_ID.fullmatch(recorded) and not test_meta.get("id")):
        return recorded, "record"  # the provider's `test<index>` fallback differs per repeat: not an id
    if _text(test_meta.get("id")):
        return str(test_meta["id"]), "test"
    text = str(description or "").strip()
    if leading := leading_case_id(text):
        return leading, "description_id"
    if text:
        return text, "description"
    return f"test{test_idx}", "index"


def provider_name(raw: Any) -> str:
    """A provider's label, else its id."""
    if isinstance(raw, Mapping):
        return str(raw.get("label") or raw.get("id") or "provider")
    return str(raw or "provider")


def current_record(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """A row's record of an older version that the kit upgrades, read as its upgrade (a report reads
    Promptfoo's stored rows of any age); any other as it is."""
    return upgrade_record(record) if record.get(MARKER) in UPGRADABLE else record


def error_kind(record: Mapping[str, Any], error: Any) -> str:
    """The kit's error kind of an error row: the record's ``error_kind``, else the ``[kind]``
    the message starts with (an older name read as today's); Promptfoo's Ctrl-C row is
    ``interrupted``; else ``unknown``."""
    kind = record.get("error_kind")
    if kind in ERROR_KINDS:
        return str(kind)
    text = str(error or "")
    if (match := _KIND_PREFIX.match(text)) and (found := RENAMED_ERROR_KINDS.get(match[1], match[1])) in ERROR_KINDS:
        return found
    if _WORKER_SHUTDOWN in text:
        return "interrupted"
    return UNKNOWN_KIND


def _outcome(raw: Mapping[str, Any], user: UserSide, checks: tuple[Check, ...], undecided: bool) -> Outcome:
    """``undecided``: a deciding entry says NOT GRADED (it failed the row without grading it)."""
    if raw.get("failureReason") == 2:
        return "invalid" if user.invalid else "error"
    if raw.get("success"):
        return "pass"
    return "incomplete" if undecided and not any(not c.passed for c in checks) else "fail"


def _checks(components: Any) -> tuple[tuple[Check, ...], list[str], bool]:
    """The graded entries, the NOT GRADED ones (``metric: reason``), and whether one of those failed
    its row (a deciding check that could not be graded)."""
    checks: list[Check] = []
    not_graded: list[str] = []
    undecided = False
    for item in components if isinstance(components, list) else ():
        if not isinstance(item, dict):
            continue
        assertion = _mapping(item.get("assertion"))
        metric = str(assertion.get("metric") or assertion.get("type") or "assertion")
        reason = str(item.get("reason") or "")
        grader_failed = bool(_mapping(item.get("metadata")).get("graderError"))  # Promptfoo's grader, e.g. llm-rubric
        if reason.startswith(NOT_GRADED) or grader_failed:
            not_graded.append(f"{metric}: {reason}" if not grader_failed else f"{metric}: {NOT_GRADED}: the grader failed: {reason}")
            undecided = undecided or not item.get("pass")
            continue
        checks.append(Check(metric, bool(item.get("pass")), reason))
    return tuple(checks), not_graded, undecided


def _not_graded(listed: Any, from_entries: list[str]) -> tuple[str, ...]:
    """The row's ``metadata.not_graded`` list (the authoritative one), else its NOT GRADED entries."""
    if isinstance(listed, list) and listed:
        return tuple(str(item) for item in listed)
    return tuple(from_entries)


def _named_scores(scores: Any, weights: Any, not_graded: Sequence[str] = ()) -> dict[str, float]:
    """Named scores, without those of weight 0 and those of NOT GRADED entries (their 0 is no score)."""
    weights = _mapping(weights)
    ungraded = {entry.split(": ", 1)[0] for entry in not_graded}
    return {
        str(name): float(value)
        for name, value in _mapping(scores).items()
        if isinstance(value, int | float) and not isinstance(value, bool) and weights.get(name, 1) != 0
        and name not in ungraded
    }


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else _EMPTY  # parsed JSON: dicts (isinstance(Mapping) is slow)


_EMPTY: Mapping[str, Any] = {}
_NO_USAGE = Usage()
_AGENTS: dict[tuple[Any, ...], AgentInfo] = {}


def _usage(raw: Any) -> dict[Role, Usage]:
    if not isinstance(raw, dict):
        return {role: _NO_USAGE for role in ROLES}
    return {
        role: Usage.from_dict(raw[role]) if isinstance(raw.get(role), dict) else _NO_USAGE for role in ROLES
    }


def _agent(raw: Any) -> AgentInfo | None:
    """The agent of a row; the same agent on thousands of rows is one object."""
    if not isinstance(raw, dict):
        return None
    key = (raw.get("name"), raw.get("model"), raw.get("temperature"), raw.get("instructions_sha256"))
    found = _AGENTS.get(key)
    if found is None:
        found = _AGENTS[key] = AgentInfo.from_dict(raw)
    return found


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count(value: Any) -> int | None:
    return len(value) if isinstance(value, list) else None


def _first_line(value: Any) -> str:
    lines = str(value or "").strip().splitlines()
    return lines[0] if lines else ""
