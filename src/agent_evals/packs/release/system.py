"""The release pack's system under test: a git repository per run, a working copy per conversation
(:mod:`agent_evals.system` for the protocol, :mod:`.repository` for the parts).

- run scope: the run's folder (``<data>/release/<run id>/``: its owner, the seed repository) made once
  by the pool, named to the workers by :data:`RUN_ENV`; undo by eval id removes that eval's working
  copies; the pool's end removes the folder; the sweep (at every pool's start, ``agent-evals merge``
  and ``cleanup``) removes the folders of runs whose owner is gone (a ``kill -9``). A plain
  ``promptfoo eval`` makes the folder in its ``beforeAll``, owned by the Promptfoo process, and
  removes it in its ``afterAll`` (:meth:`ReleaseSystem.stop_plain`).
- conversation scope: the worker's working copy (``work/<eval id>--worker-<pid>``), holding the seed's
  state when the agent is built (``variables``: ``REPO``, its path, and the commit dates of
  :data:`.repository.SERVER_ENVIRONMENT`, so a replay makes the recording's commit ids); the end-state
  snapshot is the repository's state against the seed's (:mod:`.snapshot`, in the snapshot's resource
  ``repository``); undo resets the copy to the seed's state in place. One copy per worker, not per
  conversation, and always at the same path: the agent's servers are kept for the worker's life
  (``lifetime: worker`` in its ``agent.yaml``) and work in that folder. A worker holds one conversation
  at a time, so the copy is the conversation's while it lasts. No fixtures, and no trace headers to send.

Side effects are branches, commits and changed files. The run record lists those the agent's git and
filesystem calls made (:meth:`ReleaseSystem.side_effect`, :mod:`.made`: kinds ``branch``, ``commit``,
``file``); the snapshot's resource ``side_effects`` lists what the repository shows at the end
(:func:`.repository.side_effects`: branches moved or deleted and files left uncommitted too). Undo
needs neither: it resets the working copy (and the run's end removes it).
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_evals.authoring import (
    COLD,
    CleanupReport,
    Conversation,
    KitStarter,
    ProcessRef,
    Running,
    RunRecord,
    SideEffect,
    Snapshot,
    System,
    SystemPool,
    SystemSetupError,
    ToolCall,
    Trace,
    UndoWords,
    default_data_dir,
)
from agent_evals.packs.release.made import made_by
from agent_evals.packs.release.repository import (
    COPY_SEPARATOR,
    WORK,
    SERVER_ENVIRONMENT,
    RunRepositories,
    WorkingCopy,
    folder_name,
    open_run,
    remove_run,
    reset,
    side_effects,
    start_run,
    sweep,
    undo,
)
from agent_evals.packs.release.seed_repo import build_seed_repository
from agent_evals.packs.release.snapshot import RESOURCE

if TYPE_CHECKING:
    from agent_evals.authoring import CheckRef, Shard, Suite, ToolSpec

RUN_ENV = "AGENT_EVALS_RELEASE_RUN"  # the run folder, in the workers' (and hooks') environment
SIDE_EFFECTS = "side_effects"  # the snapshot's resource listing the branches, commits and files changed
#: how a person reads the undo of a conversation's side effects (its working copy reset)
UNDONE = (UndoWords("branch", "removed", "branch"), UndoWords("commit", "removed", "commit"),
          UndoWords("file", "reverted", "file"))


def runs_base() -> Path:
    """Where run folders live: ``release/`` beside the portal's data dir (``data/release``)."""
    return default_data_dir().parent / "release"


def copy_key(trace: Trace) -> str:
    """The working copy's name: the conversation's eval and this worker."""
    return f"{trace.eval_id}{COPY_SEPARATOR}worker-{os.getpid()}"


def copies_of(root: Path, eval_id: str) -> list[Path]:
    """The working copies under the run folder ``root`` of ``eval_id`` and of the suites' evals under it
    (``run-1a2b`` covers ``run-1a2b.release-notes``)."""
    work = root / WORK
    if not work.is_dir():
        return []
    prefix = folder_name(eval_id)
    return sorted(p for p in work.iterdir() if p.name.startswith((prefix + COPY_SEPARATOR, prefix + ".")))


# -- run scope ------------------------------------------------------------------------------------


class RunningRepository(Running):
    """A run folder: the seed the conversations copy, and their working copies."""

    def env(self) -> dict[str, str]:
        return {RUN_ENV: str(self.data_dir)}

    def env_keys(self) -> tuple[str, ...]:
        return (RUN_ENV,)

    def undo_eval(self, eval_id: str) -> CleanupReport:
        report = CleanupReport()
        for copy in copies_of(self._root, eval_id):
            undo(copy)
            report.removed_fixtures.append(f"working copy {copy.name}")
        return report

    def undo_row(self, result: Mapping[str, Any]) -> CleanupReport:
        """Nothing: a row's working copy is its worker's, which may hold its next conversation by now;
        the worker resets it before that one, and the eval's end (:meth:`undo_eval`) removes it."""
        return CleanupReport()

    def active(self, eval_id: str) -> list[str]:
        return [copy.name for copy in copies_of(self._root, eval_id)]

    def alive(self) -> bool:
        return self._root.is_dir()

    @property
    def _root(self) -> Path:
        assert self.data_dir is not None
        return self.data_dir


class RepositoryPool(SystemPool):
    """The run's folder, made once (after sweeping the folders of runs that died) and removed when the
    pool closes; every suite of the run (and every shard) shares it."""

    def __init__(self, run_id: str, base: Path) -> None:
        self.run_id, self.base = run_id, base
        self._run: RunRepositories | None = None
        self._running: RunningRepository | None = None
        self._suites: set[str] = set()

    def __enter__(self) -> RepositoryPool:
        swept = sweep(self.base)
        if swept:  # the run's own line, as the portal's sweep says what it abandoned
            print(f"swept the repositories of {len(swept)} run(s) that died: {', '.join(map(str, swept))}", flush=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._run is not None:
            self._run.close()
        self._run = self._running = None

    def get(self, suite: Suite, *, shard: Shard | None = None) -> Running:
        if self._running is None:
            try:
                self._run = start_run(self.base, self.run_id)
            except (OSError, RuntimeError) as exc:
                raise SystemSetupError(f"could not make the run's test repository under {self.base}: {exc}") from exc
            self._running = RunningRepository(data_dir=self._run.root, started=True, pid=os.getpid())
        self._suites.add(suite.name)
        return self._running

    def opened(self, suite: str) -> Running | None:
        return self._running if suite in self._suites else None


class ReleaseSystem(System):
    """A test repository per run, a working copy per conversation, worked on by the agent's stdio servers."""

    name = "repository"
    undo_words = "removing this run's working copies"
    left_words = "working copies"

    def pool(
        self, run_id: str, log_folder: Path, suites: Sequence[Suite], *, starter: KitStarter = COLD
    ) -> SystemPool:
        return RepositoryPool(run_id, runs_base())  # no process of the kit's: the agent's own servers are stdio

    def attach(self, env: Mapping[str, str] | None = None) -> Running | None:
        root = (os.environ if env is None else env).get(RUN_ENV, "").strip()
        return RunningRepository(data_dir=Path(root)) if root else None

    def start_plain(self, suite: Suite, *, owner_pid: int, run_id: str) -> dict[str, Any]:
        """The run folder, owned by the Promptfoo process (swept by the next run when it dies unfinished)."""
        sweep(runs_base())
        run = start_run(runs_base(), run_id, owner=ProcessRef.of(owner_pid))
        return {"env": {RUN_ENV: str(run.root)}, "started": None, "where": f"repositories in {run.root}"}

    def stop_plain(self, pid: int, run_id: str) -> CleanupReport:
        running = self.attach()
        report = running.undo_eval(run_id) if running is not None else CleanupReport()
        if running is not None and running.data_dir is not None:
            remove_run(running.data_dir)
        return report

    def clean(self, *, url: str | None, data_dir: Path | None, eval_id: str | None, alive: set[str]) -> int | None:
        removed = sweep(runs_base())
        if removed:
            print(f"{runs_base()}: removed {len(removed)} run folder(s) of runs that died")
        return 0 if removed else None

    def sweep_dead_runs(self, runs_root: Path) -> list[str]:
        removed = sweep(runs_base())
        return [f"removed {len(removed)} run folder(s) left in {runs_base()} by runs that died"] if removed else []

    def offered_tools(self) -> Mapping[str, ToolSpec] | None:
        """Every tool of ``mcp-server-git`` and the filesystem server, from the generated catalog
        (:mod:`.tool_catalog`): the preflight knows ``git_reset`` exists though the agent is not offered it."""
        from agent_evals.authoring import mcp_tool_to_spec  # lazy: the MCP SDK, for the preflight only
        from agent_evals.packs.release.tool_catalog import catalog  # lazy: read for the preflight only

        return {t["name"]: mcp_tool_to_spec(t["name"], t["description"], t["input_schema"]) for t in catalog()}

    def side_effect(self, call: ToolCall) -> SideEffect | None:
        """The branch, commit or file a successful git or filesystem call made (:func:`.made.made_by`)."""
        return made_by(call)

    def conversation(self, trace: Trace, env: Mapping[str, str] | None = None) -> Conversation:
        return RepositoryConversation(trace, os.environ if env is None else env)

    @contextmanager
    def preflight_variables(self) -> Iterator[Mapping[str, str]]:
        """A seed repository in a temporary folder as ``${REPO}``, so the preflight starts both servers
        on a repository like a conversation's; removed with the folder."""
        with tempfile.TemporaryDirectory(prefix="agent-evals-preflight-") as folder:
            yield {"REPO": str(build_seed_repository(Path(folder) / "repo")), **SERVER_ENVIRONMENT}


# -- conversation scope ---------------------------------------------------------------------------


class RepositoryConversation(Conversation):
    """One conversation's use of its worker's working copy: reset when first needed (the agent's
    ``${REPO}``), reset again by undo.

    Without a run folder in the environment (a conversation held outside a run: a test, ``agent-evals
    live``), the conversation makes a run folder of its own and removes it with its copy."""

    def __init__(self, trace: Trace, env: Mapping[str, str]) -> None:
        super().__init__(trace)
        self._run_dir = env.get(RUN_ENV, "").strip()
        self._own_run: RunRepositories | None = None
        self._copy: WorkingCopy | None = None
        self._seed = Path()

    @property
    def headers(self) -> dict[str, str]:
        return {}  # stdio servers: nothing is sent anywhere, the working copy is the conversation's own

    @property
    def variables(self) -> Mapping[str, str]:
        return {"REPO": str(self.working_copy().path), **SERVER_ENVIRONMENT}

    def working_copy(self) -> WorkingCopy:
        if self._copy is None:
            run = self._run()
            self._copy, self._seed = run.working_copy(copy_key(self.trace)), run.seed
        return self._copy

    def _run(self) -> RunRepositories:
        if self._run_dir:
            try:
                return open_run(Path(self._run_dir))
            except (OSError, RuntimeError) as exc:
                raise SystemSetupError(f"{RUN_ENV}: {exc}") from exc
        self._own_run = start_run(runs_base(), f"conversation-{uuid.uuid4().hex[:12]}")
        return self._own_run

    def snapshot(self, record: RunRecord, checks: Sequence[CheckRef]) -> Snapshot | None:
        """The repository's state against the seed's, and the changes found from it (resource
        ``side_effects``; the record's side effects are what the calls made)."""
        if self._copy is None:
            return None  # no conversation reached the repository
        state = self._copy.snapshot()
        found = [{"kind": s.kind, "name": s.name, "detail": s.detail} for s in side_effects(state)]
        return Snapshot(str(self._copy.path), {RESOURCE: state.to_dict(), SIDE_EFFECTS: found})

    def undo(self, record: RunRecord, *, fixtures: bool) -> dict[str, Any] | None:
        """Reset the working copy to the seed's state (or remove a run folder of its own): every branch,
        commit and file the record lists goes."""
        if self._copy is None and self._own_run is None:
            return None
        if self._own_run is not None:
            self._own_run.close()
        elif self._copy is not None:
            reset(self._copy.path, self._seed)
        report = CleanupReport(undone=list(record.side_effects), words=UNDONE)
        return {**report.as_dict(), "by": "provider", "reset": "working copy"}


SYSTEM = ReleaseSystem()

__all__ = ["RUN_ENV", "SIDE_EFFECTS", "SYSTEM", "ReleaseSystem", "RepositoryConversation", "RepositoryPool",
           "RunningRepository", "copies_of", "runs_base"]
