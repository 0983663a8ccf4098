"""A domain pack: what the generic core needs to know about one agent's domain.

The core (driver, users, record, record/replay, provider, runner, report and the generic
assertions) knows no domain. A suite names its pack (provider config ``pack:``); the pack
answers the few questions only the domain can:

==========================  =====================================================================
``name``                    how suites name it (``pack: tickets``)
``checks``                  its own kit checks: name -> module with ``parse_config`` and ``grade``
``user_framing``            who the simulated user is and when its task is done
``system``                  the system under test (:mod:`agent_evals.system`): start, tag, find,
                            snapshot, fixtures, undo, sweep
``preflight``               problems in a check's config only the domain can see
``plan_values``             the golden plans' domain placeholders (``$name``, ``{"$copy": …}``)
``mutations``               the self-check's domain mutations of a golden conversation
``harmless_call``           a read-only tool call the self-check may add (``("list_items", {})``)
``case_derivation``         values a case template computes from a table row (``derive: <name>``)
``promoted_fixtures``       the fixtures of a case promoted from a production conversation
==========================  =====================================================================

Subclass :class:`Pack` and override what your domain needs; every hook has a default that
does nothing (the :class:`GenericPack`). Name your pack in a suite by its dotted path,
``pack: mypackage.packs:TicketsPack``. See docs/architecture.md, "Packs".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from agent_evals.conversation.cassette import Cassette
from agent_evals.conversation.framing import UserFraming
from agent_evals.packs.plans import Case, Mutation, PlanValues
from agent_evals.record import RunRecord
from agent_evals.system import FixtureError, System

#: A pack's case derivation: a row of a suite's case table -> values computed from it (raises
#: ValueError, one line, for a row that makes no valid case). See :mod:`agent_evals.cases`.
CaseDerivation = Callable[[Mapping[str, Any]], Mapping[str, Any]]


class Pack:
    """A domain pack with nothing domain-specific (see the module docstring for each hook)."""

    name = "generic"
    checks: Mapping[str, str] = {}
    user_framing = UserFraming()
    harmless_call: tuple[str, dict[str, Any]] | None = None  # a read-only call the self-check may repeat
    system: System = System()  # nothing to start, no side effects

    def preflight(self, check: str, config: Any) -> list[str]:
        """Problems with a check's parsed config that only the domain can see (e.g. an unknown source)."""
        return []

    def fixture_problems(self, fixtures: Any) -> list[str]:
        """Problems in a case's ``vars.fixtures`` found offline (the preflight and the provider): the system's."""
        if fixtures and type(self.system) is System:
            return [f"pack {self.name!r} has no fixtures; remove vars.fixtures"]
        return self.system.fixture_problems(fixtures)

    def plan_values(self, case: Case, entry: Mapping[str, Any]) -> PlanValues:
        """The domain placeholders of one case's golden plan."""
        return PlanValues()

    def mutations(self, case: Case, cassette: Cassette) -> Iterator[Mutation]:
        """Domain mutations of a golden conversation, each naming the metric that must catch it."""
        return iter(())

    def case_derivation(self, name: str) -> CaseDerivation | None:
        """The derivation a case template names (``derive: <name>``), or None when the pack has none by that name."""
        return None

    def promoted_fixtures(self, record: RunRecord) -> tuple[list[dict[str, Any]], list[str]]:
        """What a production conversation relied on that the seed data lacks, as the case fixtures of a case
        promoted from it (``agent-evals live promote``), and a note for the reviewer about each thing that
        could not be made one."""
        return [], []


class GenericPack(Pack):
    """The pack of an agent with no domain the kit must know."""


__all__ = ["CaseDerivation", "FixtureError", "GenericPack", "Pack", "UserFraming"]
