"""The system under test: what the core starts, tags, finds, snapshots and undoes, owned by the pack.

A pack (:mod:`agent_evals.packs.base`) says what its domain's checks, user and plans are; its
:class:`System` says what the agent works *on*, and is the only way the core reaches it. Two
systems frame every docstring here:

- the **portal** (the system of the kit's first built-in pack, in its folder): an HTTP backend started
  per run (or already serving, or external), whose side effects are pull requests tagged with the
  ``X-Eval-Id`` / ``X-Test-Id`` headers it records, found again by those ids, abandoned to undo;
- a **git repository** (the next pack's): a per-run copy of a test repository, worked on by
  stdio MCP servers (``mcp-server-git``, ``@modelcontextprotocol/server-filesystem``), one
  workspace per conversation handed to the agent as a ``variables`` entry
  (``{"REPO": <clone>}``); its side effects are branches, commits and changed files found from
  the repository's state, undone by removing them; its snapshot is the repository's state.

Two scopes, each a small object the core holds while it lasts:

==========================  ======================================================================
**run scope**               in ``agent-evals run``, the plain-Promptfoo hooks' beforeAll/afterAll,
                            ``agent-evals cleanup`` and the sweep of runs that died
``System.pool``             the systems of one run's suites, each started once (or attached to one
                            already running) and shared by the suites that can share it; its own
                            server processes start with the run's ``KitStarter`` (forked warm from
                            the run's server, which imports ``System.server_modules`` first)
``System.attach``           the system the environment names (a worker's, a hook's), or None
``System.start_plain``      beforeAll of a plain ``promptfoo eval``: start or attach, for the hook
``System.clean``            ``agent-evals cleanup``: undo what every run that is over left
``System.sweep_dead_runs``  undo what runs that died left, wherever they ran (``agent-evals merge``)
``System.preflight``        problems with an external system the environment names, before a run
``System.offered_tools``    the tools it offers the agent, known offline (the preflight's names)
``System.preflight_variables``  stand-ins for a conversation's ``${…}`` so the preflight can start the
                            agent's stdio servers (the release pack: a seed repository, removed after)
``System.undo_words``       what undoing a run does, as the runner says it after a Ctrl-C
``System.left_words``       what a run leaves in place, as a forced exit names it; ``stop_words``:
                            what stopping a system the runner started does to it
``System.add_commands``     its own subcommands of ``agent-evals`` (the portal's ``portal serve``)
``Running``                 one started or attached system: the environment the workers get
                            (``env``), where its side effects live (``data_dir``, ``url``), undo by
                            eval id (``undo_eval``), a row's undo (``undo_row``), what an eval
                            still has (``active``), whether it is still up (``alive``)
**conversation scope**      in the provider, in Promptfoo's Python worker
``System.side_effect``      the side effect a successful tool call made (a ``SideEffect`` of the
                            system's kind: a pull request, a branch…), or None
``System.fixture_problems`` a case's ``vars.fixtures`` checked offline
``System.conversation``     a :class:`Conversation`: its trace (``headers``), ``variables``, fixtures,
                            side effects found again by test id, the end-state snapshot (and
                            whether someone else spoiled it), undo
==========================  ======================================================================

Every method has a default that does nothing: :class:`System` itself is the system of an agent
with nothing the kit must start or undo (the generic pack's). Errors are one family,
:class:`SystemFailure` (kind ``system`` in the run record; ``portal`` in records of version 2).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from agent_evals.processes import COLD, KitStarter
from agent_evals.record import KitError, RunRecord, SideEffect, Snapshot, ToolCall, Trace

if TYPE_CHECKING:
    from agent_evals.suites.check_ref import CheckRef
    from agent_evals.llm.types import ToolSpec
    from agent_evals.suites.discovery import Suite
    from agent_evals.suites.shard_spec import Shard

#: the environment variable that names the pack (hence the system) of a suite's run, for the hooks
PACK_ENV = "AGENT_EVALS_PACK"


# -- errors ---------------------------------------------------------------------------------------


class SystemFailure(KitError):
    """The system under test failed the kit: it cannot be started, reached or read (kind ``system``, the
    kind of the agent's MCP servers' failures too; its message names the system). The family::

        SystemFailure             any failure of the system under test
        ├── SystemNotConfigured   the environment names no system where one is needed
        ├── SystemUnavailable     it did not answer (refused, unreachable, timed out, died)
        └── SystemSetupError      none can be had for a suite: the message says what to do

    A system adds its own below these (the portal's ``PortalError``, with the HTTP status)."""

    kind = "system"


class SystemNotConfigured(SystemFailure):
    """The environment names no system where one is needed (e.g. ``PORTAL_URL`` unset)."""


class SystemUnavailable(SystemFailure):
    """The system did not answer: connection refused, unknown host, timeout, a process that died."""


class SystemSetupError(SystemFailure):
    """No system can be had for a suite (it did not start, its data is in use…); says what to do."""


class FixtureError(KitError, ValueError):
    """A case's fixtures are malformed or the system rejected one (kind ``config``: the case, not the agent)."""

    kind = "config"


# -- undo -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UndoWords:
    """How a person reads the undo of one kind of side effect: ``abandoned 2 PR(s)`` (the portal's pull
    requests), ``undid 1 branch side effect(s)`` (a kind no pack words)."""

    kind: str  # the record's side effect kind
    done: str  # what undoing one is, in the past tense
    noun: str  # what one is called
    mark: str = ""  # before an id when it is shown: ``#12``


@dataclass
class CleanupReport:
    """What an undo did, by kind. ``undone`` (now), ``already_gone`` (undone before, or closed another
    way), ``failed`` (with why) and ``kept`` (of runs still going, left to them) are the record's side
    effects; ``words`` say them to a person, per kind (the first is said even at 0: ``abandoned 0 PR(s)``).

    Its JSON (``metadata.cleanup``, the hooks') is :meth:`as_dict`: ``{undone: [{kind, id}],
    already_gone, failed?: {"<kind> <id>": why}, removed_fixtures?, error?, summary}``."""

    undone: list[SideEffect] = field(default_factory=list)
    already_gone: list[SideEffect] = field(default_factory=list)
    failed: dict[SideEffect, str] = field(default_factory=dict)
    error: str | None = None  # the system could not be asked at all
    removed_fixtures: list[str] = field(default_factory=list)  # what the cases' fixtures had made
    kept: list[SideEffect] = field(default_factory=list)
    words: tuple[UndoWords, ...] = ()

    @property
    def acted(self) -> bool:
        """Something was undone, failed, or the system could not be asked: worth a line."""
        return bool(self.undone or self.failed or self.error)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"undone": [_short(e) for e in self.undone],
                               "already_gone": [_short(e) for e in self.already_gone]}
        if self.removed_fixtures:
            out["removed_fixtures"] = self.removed_fixtures
        if self.failed:
            out["failed"] = {e.describe(): why for e, why in self.failed.items()}
        if self.error:
            out["error"] = self.error
        out["summary"] = self.summary()
        return out

    def summary(self) -> str:
        kinds = [w.kind for w in self.words] + [e.kind for e in self.undone]
        counts = {k: sum(e.kind == k for e in self.undone) for k in dict.fromkeys(kinds)}
        said = {k: n for k, n in counts.items() if n} or dict(list(counts.items())[:1])
        parts = [f"{self._words(k).done} {n} {self._words(k).noun}(s)" for k, n in said.items()]
        if self.removed_fixtures:
            parts.append(f"removed {len(self.removed_fixtures)} fixture(s)")
        for kind in dict.fromkeys(e.kind for e in self.kept):
            kept = [e for e in self.kept if e.kind == kind]
            parts.append(f"left {len(kept)} {self._words(kind).noun}(s) of runs still going ({self._shown(kept)})")
        if self.failed:
            parts.append(f"{len(self.failed)} failed: " + "; ".join(f"{self._shown([e])}: {why}"
                                                                    for e, why in self.failed.items()))
        if self.error:
            parts.append(f"error: {self.error}")
        return ", ".join(parts) or "nothing to undo"

    def add(self, other: CleanupReport) -> CleanupReport:
        """This report with ``other``'s findings added (a second sweep after an interrupt)."""
        self.undone += [e for e in other.undone if e not in self.undone]
        self.failed.update(other.failed)
        self.removed_fixtures += other.removed_fixtures
        self.error = self.error or other.error
        self.words = self.words or other.words
        return self

    def _words(self, kind: str) -> UndoWords:
        return next((w for w in self.words if w.kind == kind), UndoWords(kind, "undid", f"{kind} side effect"))

    def _shown(self, effects: Sequence[SideEffect]) -> str:
        return ", ".join(f"{self._words(e.kind).mark or e.kind + ' '}{e.id}" for e in effects)


def _short(effect: SideEffect) -> dict[str, str]:
    return {"kind": effect.kind, "id": effect.id}


# -- run scope ------------------------------------------------------------------------------------


@dataclass
class Running:
    """One system started or attached to for a suite's run (or reached from the environment).

    ``data_dir``: the folder its state lives in when the kit keeps it (the portal's data dir, the
    repository copy), else None; ``url``: an external system's address, else None (a run's manifest
    records either, and the sweep of a run that died finds its side effects there). ``started``: this
    process started it and stops it. The default undoes nothing and has nothing to give the workers.
    """

    data_dir: Path | None = None
    url: str | None = None
    started: bool = False
    pid: int | None = None
    log_file: Path | None = None

    def env(self) -> dict[str, str]:
        """What the workers (and hooks) need in their environment to reach it."""
        return {}

    def env_keys(self) -> tuple[str, ...]:
        """The variables :meth:`env` may set: the runner removes inherited ones first."""
        return ()

    def undo_eval(self, eval_id: str) -> CleanupReport:
        """Undo every side effect and fixture tagged with ``eval_id`` (a run's, a suite's)."""
        return CleanupReport()

    def undo_row(self, result: Mapping[str, Any]) -> CleanupReport:
        """Undo what one Promptfoo result row made: the side effects its run record names, those found
        by its test id (a provider that errored after making one), and its fixtures."""
        return CleanupReport()

    def active(self, eval_id: str) -> list[str]:
        """What ``eval_id`` still has in place, shown (``#12``), asked quickly (a forced exit)."""
        return []

    def alive(self) -> bool:
        """False when a system this runner started is gone (killed, crashed)."""
        return True

    def reopen(self) -> AbstractContextManager[Running]:
        """The same system's state reached again after :meth:`alive` turned false (its side effects
        outlive its process); raises :class:`SystemSetupError`."""
        return _same(self)

    def where(self) -> str:
        """Where its side effects live, for a person: the data dir, else its URL."""
        return str(self.data_dir) if self.data_dir is not None else (self.url or "nowhere")


@contextmanager
def _same(running: Running) -> Iterator[Running]:
    yield running


class SystemPool:
    """The systems of one run: each started once and shared by the suites that can share it, all
    stopped when the pool closes. The default gives every suite a :class:`Running` with nothing."""

    def __enter__(self) -> SystemPool:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return None

    def get(self, suite: Suite, *, shard: Shard | None = None) -> Running:
        """The system the suite runs against (``shard``: a shard's own, when the system keeps one per
        shard); raises :class:`SystemSetupError`."""
        return Running()

    def opened(self, suite: str) -> Running | None:
        """The system a suite (by name) got, or None: nothing is started."""
        return None

    def begin_stop(self) -> None:
        """Ask every system this pool started to stop (the suites are done), side by side."""


class System:
    """A system under test with nothing to start and no side effects (see the module docstring)."""

    name = "none"
    #: what undoing a run does, in the runner's words after a Ctrl-C ("stopping Promptfoo, then …"); "": nothing
    undo_words = ""
    left_words = "side effects"  # what a run leaves in place, as a forced exit names them ("pull requests")
    stop_words = ""  # what stopping a system the runner started does to them, if it undoes them
    #: the modules its own server process (a kit command, started with the pool's ``starter``) imports:
    #: the run's warm server imports them first, so that process starts forked, not cold
    server_modules: tuple[str, ...] = ()
    #: the modules a run's provider worker imports for it on its first row (what sets its fixtures up,
    #: reads its end state, undoes a row): the run's warm server imports them before it forks the workers
    worker_modules: tuple[str, ...] = ()

    # -- run scope

    def pool(
        self, run_id: str, log_folder: Path, suites: Sequence[Suite], *, starter: KitStarter = COLD
    ) -> SystemPool:
        """The run's systems for ``suites`` (``run_id`` tags what a system started sweeps if the run dies);
        a process of the kit's it starts, it starts with ``starter`` (the run's warm launcher, if any)."""
        return SystemPool()

    def attach(self, env: Mapping[str, str] | None = None) -> Running | None:
        """The system the environment names (``os.environ`` by default), or None when it names none."""
        return None

    def start_plain(self, suite: Suite, *, owner_pid: int, run_id: str) -> dict[str, Any]:
        """A plain ``promptfoo eval``'s beforeAll: start the suite's system (owned by ``owner_pid``, stopped
        when it dies) or attach to one running; answers ``{"env": {…}, "started": <pid or None>, "where": "…"}``:
        what the workers need, the process to stop at the end, and what the run prints about it."""
        return {"env": {}, "started": None, "where": ""}

    def stop_plain(self, pid: int, run_id: str) -> CleanupReport:
        """A plain ``promptfoo eval``'s afterAll: undo ``run_id`` and stop what :meth:`start_plain` started."""
        running = self.attach()
        return running.undo_eval(run_id) if running is not None else CleanupReport()

    def clean(self, *, url: str | None, data_dir: Path | None, eval_id: str | None, alive: set[str]) -> int | None:
        """``agent-evals cleanup``: undo what runs that are over left (``eval_id``: that one only; runs in
        ``alive`` are left to themselves), print one line per place; the exit status, None when this
        system has nothing anywhere."""
        return None

    def sweep_dead_runs(self, runs_root: Path) -> list[str]:
        """Undo what runs that died left where they ran; what it did, one line per place (``agent-evals merge``
        says them)."""
        return []

    def preflight(self, env: Mapping[str, str] | None = None) -> list[str]:
        """Before a run: an external system the environment names that does not answer, one line each."""
        return []

    def add_commands(self, sub: Any) -> None:
        """Its own subcommands of ``agent-evals`` (``sub``: argparse's subparsers), e.g. ``portal serve``."""

    def offered_tools(self) -> Mapping[str, ToolSpec] | None:
        """The tools it offers the agent, known offline (names and schemas), or None when unknown."""
        return None

    @contextmanager
    def preflight_variables(self) -> Iterator[Mapping[str, str]]:
        """Stand-ins for what a conversation gives its agent's servers (:attr:`Conversation.variables`),
        so the preflight can start them before the run; whatever they name is removed on exit."""
        yield {}

    # -- conversation scope

    def side_effect(self, call: ToolCall) -> SideEffect | None:
        """The side effect a successful tool call made (the record's ``side_effects``; undone after the
        case), or None. Its kind is the system's word (``pull_request``, ``branch``…)."""
        return None

    def fixture_problems(self, fixtures: Any) -> list[str]:
        """Problems in a case's ``vars.fixtures`` found offline (the preflight and the provider)."""
        return [] if not fixtures else [f"system {self.name!r} has no fixtures; remove vars.fixtures"]

    def conversation(self, trace: Trace, env: Mapping[str, str] | None = None) -> Conversation:
        """One conversation on this system (in the worker; ``env``: ``os.environ`` by default). A trace
        with no test id is a production conversation read back for scoring (``agent-evals live``): its
        end state is what the record names, nothing is found by a trace, nothing is undone."""
        return Conversation(trace)


class Conversation:
    """One conversation's view of the system: created before it starts, undone after its end state
    was read. The default makes nothing, finds nothing and reads an empty end state."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    @property
    def headers(self) -> dict[str, str]:
        """How what the conversation makes is tagged: the trace headers the agent's requests carry."""
        return {"X-Eval-Id": self.trace.eval_id, "X-Test-Id": self.trace.test_id}

    @property
    def variables(self) -> Mapping[str, str]:
        """Values an agent's MCP server configuration may name as ``${NAME}`` (a per-conversation
        workspace: ``{"REPO": "/tmp/…/clone"}``); none beyond the environment by default."""
        return {}

    def create_fixtures(self, fixtures: Any) -> list[dict[str, Any]]:
        """Make the case's fixtures, tagged like its side effects; answer what was made (the run record's
        ``fixtures``). Raises a ``config`` error (``FixtureError``) when one is rejected."""
        if fixtures:
            raise FixtureError(f"the system has no fixtures; remove vars.fixtures (got {fixtures!r:.80})")
        return []

    def found_again(self, record: RunRecord) -> None:
        """After an error: add to the record the side effects made under this trace that it missed."""

    def snapshot(self, record: RunRecord, checks: Sequence[CheckRef]) -> Snapshot | None:
        """The end state the checks grade (the side effects made under this trace are added to the record
        first), or None when there is none; raises :class:`SystemFailure` when it cannot be read."""
        return None

    def spoiled(self, record: RunRecord, snapshot: Snapshot) -> str | None:
        """Why the row cannot be graded when something other than the agent undid one of its side effects
        before the end state was read (a cleanup while the run was going), else None."""
        return None

    def undo(self, record: RunRecord, *, fixtures: bool) -> dict[str, Any] | None:
        """Undo the conversation's side effects (and its fixtures, when it made some) once its end state
        was read; answers the row's ``metadata.cleanup`` (None: nothing was undone here)."""
        return None


__all__ = [
    "PACK_ENV",
    "CleanupReport",
    "Conversation",
    "FixtureError",
    "Running",
    "System",
    "SystemFailure",
    "SystemNotConfigured",
    "SystemPool",
    "SystemSetupError",
    "SystemUnavailable",
    "UndoWords",
]
