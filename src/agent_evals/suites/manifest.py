"""The kit's own record of a run: which suites ran as which Promptfoo eval, what was selected,
how it ended. One JSON file per run, written by ``agent-evals run`` as the run goes, in the
run's folder (beside the portal data dirs; the run's portal logs live there too):

    <data>/runs/<run id>/run.json          (<data> = the parent of AGENT_EVALS_DATA_DIR, default data/)
    <data>/runs/<run id>/tmp/              the run's temporary directory (gone once the run ends)
    {"format": "agent-evals/run@1", "run_id": "run-…", "pid": 1234, "pid_started": "8812345", "started_at": "…Z",
     "finished_at": "…Z" | null, "mode": "live" | "replay" | "record", "git_revision": "abc1234" | null,
     "interrupted": false, "exit_code": 0 | null, "swept": [places swept after it died],
     "unclean": [places its own cleanup could not reach],
     "suites": [{"suite": "tickets-create", "eval_id": "eval-…" | null, "selected": ["C01", …] | null,
                 "repeat": 1, "providers": 1, "exit_code": 0 | null, "interrupted": false,
                 "data_dir": "…/data/portal" | null, "shard": "2/4" | null,
                 "promptfoo_dir": "…/data/runs/<run id>/promptfoo" | null,
                 "portal_url": "http://…" | null (an external portal), "portal_died": false,
                 "budget": {the suite's own budget_usd ledger} | null,
                 "attempt": 1, "rerun_of": "eval-…" | null}],
     "budget": {"limit_usd": 5.0, "spent_usd": 4.93, …} | null}

``selected`` is the case ids the filters left (None when the kit could not tell ahead), so a
report can say whether every selected case ran. ``finished_at`` null with a dead ``pid`` (or
one that now belongs to a process started at another time than ``pid_started``) is a run that was killed (a stale run: its PRs are swept by the next run). ``shard`` is the part of
the suite a sharded run took (``--shard``); its eval then lives in ``promptfoo_dir``, not in
the viewer's database. ``budget`` is the run's spend ledger at its end (``--budget-usd``).
A *place* is where a suite's PRs live: its data dir, or ``portal <url>`` for an external portal.
A suite whose invalid rows were run again (``--rerun-invalid N``) has one more entry per
attempt, ``attempt`` 2, 3, …, its eval holding only those rows (``rerun_of`` the eval before).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from agent_evals.processes import ProcessRef, start_time
from agent_evals.paths import default_data_dir

FORMAT = "agent-evals/run@1"
_SAVING = threading.Lock()
MANIFEST_NAME = "run.json"
Mode = Literal["live", "replay", "record"]


def runs_dir() -> Path:
    """Where run folders live: ``runs/`` beside the default portal data dir (``data/runs``)."""
    return default_data_dir().parent / "runs"


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
    shard: str | None = None
    promptfoo_dir: str | None = None
    budget: dict[str, Any] | None = None
    portal_url: str | None = None  # an external portal's (PORTAL_URL): its PRs are swept through it
    portal_died: bool = False  # the portal the runner started for it was gone before the cleanup

    @property
    def place(self) -> str | None:
        """Where its PRs live: the data dir, else ``portal <url>`` (see ``runner.sweep.place``)."""
        if self.data_dir:
            return self.data_dir
        return f"portal {self.portal_url.rstrip('/')}" if self.portal_url else None
    until_decided: dict[str, Any] | None = None  # --repeat-until-decided: its rounds, each case's runs and why
    attempt: int = 1  # 2, 3, …: a re-run of the suite's invalid rows (--rerun-invalid), its own eval
    rerun_of: str | None = None  # the eval whose invalid rows an attempt re-ran


@dataclass
class RunManifest:
    run_id: str
    mode: Mode
    pid: int = field(default_factory=os.getpid)
    pid_started: str | None = field(default_factory=lambda: start_time(os.getpid()))  # tells a reused pid
    started_at: str = field(default_factory=now)
    finished_at: str | None = None
    git_revision: str | None = None
    interrupted: bool = False
    exit_code: int | None = None
    suites: list[SuiteRun] = field(default_factory=list)
    swept: list[str] = field(default_factory=list)
    unclean: list[str] = field(default_factory=list)  # places its own cleanup could not reach
    budget: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, **asdict(self)}

    def runner_alive(self) -> bool:
        """The run's process still runs (not another that got its pid since)."""
        return ProcessRef(self.pid, self.pid_started).alive()

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RunManifest:
        if raw.get("format") != FORMAT:
            raise ValueError(f"not a run manifest of format {FORMAT}: {raw.get('format')!r}")
        data = {k: v for k, v in raw.items() if k != "format"}
        data["suites"] = [SuiteRun(**s) for s in data.get("suites") or []]
        return cls(**data)

    def save(self, folder: Path) -> Path:
        """Write ``folder/run.json`` (``folder`` is the run's folder); suites that run at once share it."""
        with _SAVING:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / MANIFEST_NAME
            tmp = path.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
            tmp.replace(path)
            return path


def temp_dir(folder: Path) -> Path:
    """The temporary directory of the run in ``folder`` (``TMPDIR`` of its Promptfoo processes and
    their workers: Promptfoo's ``promptfoo-worker-*`` request files land here, not in the system's),
    removed at the end of the run, or by the sweep after a run that died."""
    return folder / "tmp"


def suite_eval_id(run_id: str, suite: str) -> str:
    """The eval id a suite's pull requests and fixtures carry (``X-Eval-Id``): the run's id and the
    suite's name, so the cleanup of one suite never touches those of another running at once."""
    return f"{run_id}.{suite}"


def load_manifests(folder: Path) -> list[RunManifest]:
    """Every readable manifest under ``folder`` (``<run id>/run.json``), oldest first."""
    out = []
    for path in sorted(folder.glob(f"run-*/{MANIFEST_NAME}")) if folder.is_dir() else []:
        try:
            out.append(RunManifest.from_dict(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, TypeError):
            continue
    return sorted(out, key=lambda m: m.started_at)
