"""The kit's own record of a run: which suites ran as which Promptfoo eval, what was selected,
how it ended. One JSON file per run, written by ``agent-evals run`` as the run goes:

    <PROMPTFOO_CONFIG_DIR>/agent-evals/runs/<run id>.json
    {"format": "agent-evals/run@1", "run_id": "run-…", "pid": 1234, "started_at": "…Z",
     "finished_at": "…Z" | null, "mode": "live" | "replay" | "record", "git_revision": "abc1234" | null,
     "interrupted": false, "exit_code": 0 | null,
     "suites": [{"suite": "spoke-create", "eval_id": "eval-…" | null, "selected": ["C01", …] | null,
                 "repeat": 1, "providers": 1, "exit_code": 0 | null, "interrupted": false,
                 "data_dir": "…/data/portal" | null}]}

``selected`` is the case ids the filters left (None when the kit could not tell ahead), so a
report can say whether every selected case ran. ``finished_at`` null with a dead ``pid`` is a
run that was killed (a stale run: its PRs are swept by the next run).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

FORMAT = "agent-evals/run@1"
Mode = Literal["live", "replay", "record"]


def runs_dir(promptfoo_config_dir: str | os.PathLike[str]) -> Path:
    return Path(promptfoo_config_dir) / "agent-evals" / "runs"


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class SuiteRun:
    suite: str
    eval_id: str | None = None
    selected: list[str] | None = None
    repeat: int = 1
    providers: int = 1
    exit_code: int | None = None
    interrupted: bool = False
    data_dir: str | None = None


@dataclass
class RunManifest:
    run_id: str
    mode: Mode
    pid: int = field(default_factory=os.getpid)
    started_at: str = field(default_factory=now)
    finished_at: str | None = None
    git_revision: str | None = None
    interrupted: bool = False
    exit_code: int | None = None
    suites: list[SuiteRun] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, **asdict(self)}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RunManifest:
        if raw.get("format") != FORMAT:
            raise ValueError(f"not a run manifest of format {FORMAT}: {raw.get('format')!r}")
        data = {k: v for k, v in raw.items() if k != "format"}
        data["suites"] = [SuiteRun(**s) for s in data.get("suites") or []]
        return cls(**data)

    def save(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.run_id}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)
        return path


def load_manifests(folder: Path) -> list[RunManifest]:
    """Every readable manifest in ``folder``, oldest first (unreadable ones are skipped)."""
    out = []
    for path in sorted(folder.glob("run-*.json")) if folder.is_dir() else []:
        try:
            out.append(RunManifest.from_dict(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, TypeError):
            continue
    return sorted(out, key=lambda m: m.started_at)
