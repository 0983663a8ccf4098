"""What a pack and the golden machinery (:mod:`agent_evals.golden`) hand each other.

:meth:`agent_evals.packs.base.Pack.plan_values` gets a :class:`Case` and answers its
:class:`PlanValues`; :meth:`~agent_evals.packs.base.Pack.mutations` gets a case and a golden
cassette and answers :class:`Mutation` s. They live with the packs, below the golden plans and
the self-check that use them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_evals.conversation.cassette import Cassette


@dataclass(frozen=True)
class Case:
    """What the plan needs from a case file entry."""

    id: str
    first_message_key: str | None  # single-turn: the prompt; else None (taken from the plan)
    goal: str | None
    asserts: list[dict[str, Any]]
    vars: dict[str, Any] = field(default_factory=dict)

    def check_config(self, name: str) -> dict[str, Any] | None:
        """The ``config`` of the case's kit check ``name`` (``assertions/<name>.py``), or None."""
        found = self.check(name)
        return found[0] if found is not None else None

    def check(self, name: str) -> tuple[dict[str, Any], str] | None:
        """``(config, metric)`` of the case's kit check ``name``, or None."""
        for item in self.asserts:
            if str(item.get("value", "")).endswith(f"/{name}.py"):
                return dict(item.get("config") or {}), str(item.get("metric") or name)
        return None


@dataclass
class PlanValues:
    """A golden plan's domain placeholders for one case: ``values`` by name (``"$name"``: a value,
    :class:`~agent_evals.golden.plan.Live` or :class:`~agent_evals.golden.plan.Unavailable`), and ``expand``, which turns a domain object of the plan
    (``{"$copy": …}``) into its value, or answers None for what is not its own."""

    values: dict[str, Any] = field(default_factory=dict)
    expand: Callable[[Mapping[str, Any]], Any | None] | None = None


@dataclass(frozen=True)
class Mutation:
    """A broken copy of a golden cassette and the metric of the assertion that must fail on it."""

    name: str
    must_fail: str  # the metric of the assertion that must catch it
    cassette: Cassette
