"""The systems under test of one run: each suite's pack's system (:mod:`agent_evals.system`), one
pool per kind of system, each started once and shared by the suites that can share it (the portal:
the suites with the same data dir), all stopped when the run ends (a forced exit detaches them).
A system's own server process starts with the run's :class:`KitStarter` (forked warm, when the run
has a warm server that imported the systems' :func:`server_modules`)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from agent_evals.packs import load_pack
from agent_evals.processes import COLD, KitStarter
from agent_evals.runner.interrupts import CLEANING_UP
from agent_evals.record import KitError
from agent_evals.suites.discovery import Suite
from agent_evals.suites.shard_spec import Shard
from agent_evals.system import Running, System, SystemPool
from agent_evals.suites.files import load_suite


def suite_pack(suite: Suite) -> str:
    """The pack a suite's providers name (``pack:`` in the provider config), else ``generic``; a
    ``config`` error when two of them name packs with different systems."""
    try:
        providers = load_suite(suite).providers
    except KitError:
        return "generic"  # the preflight (or the provider, per row) says what is wrong with the suite
    names = list(dict.fromkeys(str(p.config.get("pack") or "generic") for p in providers)) or ["generic"]
    kinds = {type(load_pack(name).system) for name in names}
    if len(kinds) > 1:
        raise KitError(f"suite {suite.name}: its providers name packs with different systems ({', '.join(names)}): "
                       "give each its own suite", kind="config")
    return names[0]


def suite_systems(suites: Sequence[Suite]) -> list[System]:
    """The system of each suite whose pack loads (read once per run: each read loads the suite's files)."""
    systems = []
    for suite in suites:
        try:
            systems.append(load_pack(suite_pack(suite)).system)
        except KitError:  # that suite says so when its turn comes
            continue
    return systems


def server_modules(systems: Sequence[System]) -> tuple[str, ...]:
    """What the systems' own servers import (``System.server_modules``), for the warm server."""
    return tuple(dict.fromkeys(module for system in systems for module in system.server_modules))


def worker_modules(systems: Sequence[System]) -> tuple[str, ...]:
    """What the run's workers import for its systems (``System.worker_modules``), for the warm server."""
    return tuple(dict.fromkeys(module for system in systems for module in system.worker_modules))


def undo_words(systems: Sequence[System]) -> str:
    """What undoing a run does, in its systems' words ("abandoning this run's pull requests and
    removing this run's working copies"); ``CLEANING_UP`` when none undoes anything."""
    return " and ".join(dict.fromkeys(system.undo_words for system in systems if system.undo_words)) or CLEANING_UP


class Systems:
    """The run's systems, by suite (see the module docstring)."""

    def __init__(self, run_id: str, log_folder: Path, suites: Sequence[Suite] = (), *,
                 starter: KitStarter = COLD) -> None:
        self.run_id, self.log_folder, self.starter = run_id, log_folder, starter
        self._packs: dict[str, str] = {}
        self._suites = list(suites)
        self._stack = ExitStack()
        self._pools: dict[type[System], SystemPool] = {}
        self._opened: dict[str, Running] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> Systems:
        return self

    def __exit__(self, *exc: object) -> bool | None:
        return self._stack.__exit__(*exc)  # type: ignore[arg-type]

    def pack_name(self, suite: Suite) -> str:
        if suite.name not in self._packs:
            self._packs[suite.name] = suite_pack(suite)
        return self._packs[suite.name]

    def _kind(self, suite: Suite) -> type[System] | None:
        try:
            return type(load_pack(self.pack_name(suite)).system)
        except KitError:  # that suite says so when its turn comes
            return None

    def _pool(self, suite: Suite) -> SystemPool:
        system = load_pack(self.pack_name(suite)).system
        with self._lock:
            pool = self._pools.get(type(system))
            if pool is None:
                mine = [s for s in self._suites if self._kind(s) is type(system)]
                pool = self._stack.enter_context(system.pool(self.run_id, self.log_folder, mine or [suite],
                                                             starter=self.starter))
                self._pools[type(system)] = pool
            return pool

    def get(self, suite: Suite, *, shard: Shard | None = None) -> Running:
        """The system the suite runs against (raises ``SystemSetupError``, kind ``system``)."""
        running = self._pool(suite).get(suite, shard=shard)
        with self._lock:
            self._opened[suite.name] = running
        return running

    def opened(self, suite: str) -> Running | None:
        with self._lock:
            return self._opened.get(suite)

    def system_of(self, suite: str) -> System:
        """The system of a suite this run started (the generic one when its pack cannot be loaded)."""
        try:
            return load_pack(self._packs.get(suite, "generic")).system
        except KitError:
            return System()

    def begin_stop(self) -> None:
        for pool in list(self._pools.values()):
            pool.begin_stop()
