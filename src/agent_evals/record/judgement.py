"""What the judge model said about one judged check of a conversation (standard library only).

The provider asks the judge (role ``judge``) once per question of each judged check
(``goal_reached``: one question; ``expected_statements``: one per statement;
``trajectory_quality``: one) and keeps the answers in the run record's ``judged`` list,
so the checks' ``grade`` functions read verdicts from the metadata like every other check,
and a replay re-grades from the cassette's recorded judge replies. A check the judge could
not answer (no judge configured, a cassette without judge replies) has ``not_graded`` set
to the reason and no verdicts: it is reported NOT GRADED, never as a pass.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Bumped when the judge's questions change wording, so recorded replies of the old wording
#: are not served for the new questions.
QUESTION_VERSION = 1


def judgement_key(check: str, config: Any) -> str:
    """``expected_statements:3f2a9c1b0d4e``: one judged check of a test, by its name and config (no
    config is the same as an empty one)."""
    canonical = json.dumps(config or {}, sort_keys=True, ensure_ascii=False, default=str)
    return f"{check}:{hashlib.sha256(canonical.encode()).hexdigest()[:12]}"


def question_key(judgement: str, index: int) -> str:
    """The key a recorded judge reply answers: ``<judgement key>#<question number>@v<version>``."""
    return f"{judgement}#{index + 1}@v{QUESTION_VERSION}"


@dataclass(frozen=True)
class Verdict:
    """The judge's answer to one question: yes/no, a one-sentence reason, and a score when asked for."""

    question: str
    passed: bool
    reason: str
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"question": self.question, "pass": self.passed, "reason": self.reason}
        if self.score is not None:
            out["score"] = self.score
        return out

    @classmethod
    def from_dict(cls, raw: Any) -> Verdict:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("pass"), bool):
            raise ValueError(f"metadata 'judged' verdicts must be {{question, pass, reason}}, got {raw!r:.80}")
        score = raw.get("score")
        return cls(
            question=str(raw.get("question") or ""),
            passed=raw["pass"],
            reason=str(raw.get("reason") or ""),
            score=float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None,
        )


@dataclass(frozen=True)
class Judgement:
    """One judged check of a test: its verdicts, or why it was not graded."""

    check: str
    key: str
    verdicts: tuple[Verdict, ...] = ()
    not_graded: str | None = None
    model: str = ""
    informative: bool = False  # reported, never deciding the row (goal_reached added for every case with a goal)
    rubric: str = ""  # the hash of the questions' wording the verdicts answer (judging.questions.rubric_sha256)

    @property
    def graded(self) -> bool:
        return self.not_graded is None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": self.check, "key": self.key, "verdicts": [v.to_dict() for v in self.verdicts]}
        if self.not_graded is not None:
            out["not_graded"] = self.not_graded
        if self.model:
            out["model"] = self.model
        if self.informative:
            out["informative"] = True
        if self.rubric:
            out["rubric"] = self.rubric
        return out

    @classmethod
    def from_dict(cls, raw: Any) -> Judgement:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("check"), str) or not isinstance(raw.get("key"), str):
            raise ValueError(f"metadata 'judged' entries must be {{check, key, verdicts}}, got {raw!r:.80}")
        verdicts = raw.get("verdicts") or []
        if not isinstance(verdicts, list):
            raise ValueError("metadata 'judged' verdicts must be a list")
        not_graded = raw.get("not_graded")
        return cls(
            check=raw["check"],
            key=raw["key"],
            verdicts=tuple(Verdict.from_dict(v) for v in verdicts),
            not_graded=str(not_graded) if not_graded is not None else None,
            model=str(raw.get("model") or ""),
            informative=bool(raw.get("informative")),
            rubric=str(raw.get("rubric") or ""),
        )
