"""What a shard's results file says about its shard: the :class:`ShardStamp`.

``agent-evals run … --shard I/N`` writes Promptfoo's ``-o`` file, then adds one line to it, right
after ``evalId``, that Promptfoo's readers ignore::

    {
      "evalId": "eval-…",
      "agentEvals": {"format": "agent-evals/shard@1", "suite": "tickets-create", "shard": 2, "of": 4, …},
      "results": {…

It holds everything ``agent-evals merge`` needs to put the shards together and to tell what is
missing, without reading the rows: the suite, the shard, a fingerprint of what ran (the suite's
files as loaded, the eval's description — models, revision, instructions — the selection, the
repeat count, the mode), the run id, and the whole plan: the selected cases in suite order and
which of them each shard runs.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
import hashlib

from agent_evals.shards.plan import PlannedCase
from agent_evals.suites.shard_spec import Shard, ShardError

FORMAT = "agent-evals/shard@1"
KEY = "agentEvals"
_FIRST = b'{\n  "evalId": '
_STAMP_LINE = b'  "' + KEY.encode() + b'": '


@dataclass(frozen=True)
class ShardStamp:
    suite: str
    shard: Shard
    fingerprint: str
    run_id: str
    mode: str
    repeat: int
    providers: int
    selected: tuple[PlannedCase, ...]
    plan: tuple[tuple[int, ...], ...]  # per shard (index 0 = shard 1): positions in ``selected``
    balanced_by: str = "cases"  # or "durations"
    git_revision: str | None = None

    @property
    def cases(self) -> tuple[PlannedCase, ...]:
        """This shard's cases, in the order Promptfoo runs them."""
        return tuple(self.selected[p] for p in self.plan[self.shard.index - 1])

    @property
    def planned(self) -> tuple[int, ...]:
        """The shards (1-based) the plan gives a case to: the ones that write a results file."""
        return tuple(number for number, positions in enumerate(self.plan, start=1) if positions)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "suite": self.suite,
            "shard": self.shard.index,
            "of": self.shard.total,
            "fingerprint": self.fingerprint,
            "run_id": self.run_id,
            "mode": self.mode,
            "repeat": self.repeat,
            "providers": self.providers,
            "balanced_by": self.balanced_by,
            "git_revision": self.git_revision,
            "selected": [[case.id, case.description] for case in self.selected],
            "plan": [list(positions) for positions in self.plan],
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], source: str) -> ShardStamp:
        if raw.get("format") != FORMAT:
            raise ShardError(f"{source}: a shard stamp of format {raw.get('format')!r}, expected {FORMAT}")
        try:
            shard = Shard(int(raw["shard"]), int(raw["of"]))
            selected = tuple(PlannedCase(str(i), str(d)) for i, d in raw["selected"])
            plan = tuple(tuple(int(p) for p in positions) for positions in raw["plan"])
            if len(plan) != shard.total or any(not 0 <= p < len(selected) for ps in plan for p in ps):
                raise ValueError("the plan does not fit the selection")
            return cls(
                suite=str(raw["suite"]), shard=shard, fingerprint=str(raw["fingerprint"]),
                run_id=str(raw["run_id"]), mode=str(raw["mode"]), repeat=int(raw["repeat"]),
                providers=int(raw["providers"]), selected=selected, plan=plan,
                balanced_by=str(raw.get("balanced_by") or "cases"),
                git_revision=str(raw["git_revision"]) if raw.get("git_revision") else None,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ShardError(f"{source}: a malformed shard stamp ({type(exc).__name__}: {exc})") from None


def stamp_results_file(path: Path, stamp: ShardStamp) -> None:
    """Add the stamp line to a ``-o`` file Promptfoo wrote (in place; the rest is copied as is)."""
    tmp = path.with_name(path.name + ".stamping")
    line = _STAMP_LINE + json.dumps(stamp.to_json(), ensure_ascii=False, separators=(",", ":")).encode() + b",\n"
    with path.open("rb") as source:
        first, second = source.readline(), source.readline()
        if not (first + second).startswith(_FIRST) or not second.rstrip().endswith(b","):
            raise ShardError(f"{path}: not a results file as Promptfoo writes it (-o JSON); cannot stamp it")
        with tmp.open("wb") as target:
            target.write(first + second + line)
            shutil.copyfileobj(source, target, 4 * 1024 * 1024)
    os.replace(tmp, path)


def read_stamp(path: Path) -> Mapping[str, Any] | None:
    """The raw ``agentEvals`` object of a results file (a shard's, or a merged one's), or None.
    Only the first lines are read."""
    try:
        with Path(path).open("rb") as handle:
            head = handle.readline() + handle.readline()
            if not head.startswith(_FIRST):
                return None
            line = handle.readline()
    except OSError:
        return None
    if not line.startswith(_STAMP_LINE):
        return None
    try:
        value = json.loads(line[len(_STAMP_LINE) :].rstrip().rstrip(b","))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def shard_stamp(path: Path) -> ShardStamp:
    """The shard stamp of a shard's results file; anything else raises a one-line :class:`ShardError`."""
    raw = read_stamp(path)
    if raw is None:
        raise ShardError(
            f"{path}: not a shard's results file (no shard stamp): write it with "
            "`npm run eval -- <suite> --shard I/N`"
        )
    return ShardStamp.from_json(raw, str(path))


def fingerprint(parts: Sequence[Any]) -> str:
    """A short hash of what ran (JSON of ``parts``, keys sorted)."""
    text = json.dumps(list(parts), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
