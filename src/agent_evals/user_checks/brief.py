"""The simulated user's brief: what the case told it (its goal, persona, facts and instructions,
or a custom simulator's params), the ground its messages are checked against (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class UserBrief:
    """A case's ``vars.simulated_user`` (``$fixture`` references filled in), as the user checks read it.

    ``params`` are a custom simulator's (``class:``): they are its brief, facts included.
    """

    goal: str = ""
    persona: str = ""
    facts: Any = None
    instructions: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def has_facts(self) -> bool:
        """Whether the brief gives the user facts to use (else invented values cannot be told apart)."""
        return _present(self.facts) or _present(dict(self.params))

    def texts(self) -> list[str]:
        """Every text of the brief, facts keys and values included (the ground of the user's values)."""
        return [t for t in (self.goal, self.persona, self.instructions, *_flatten(self.facts), *_flatten(self.params)) if t]

    @classmethod
    def of(cls, spec: Any) -> UserBrief:
        """From a ``SimulatedUserSpec``-like object (``goal``, ``persona``, ``facts``, ``instructions``, ``params``)."""
        return cls(
            goal=str(getattr(spec, "goal", None) or ""),
            persona=str(getattr(spec, "persona", None) or ""),
            facts=getattr(spec, "facts", None),
            instructions=str(getattr(spec, "instructions", None) or ""),
            params=dict(getattr(spec, "params", None) or {}),
        )


def _present(value: Any) -> bool:
    return value not in (None, "", {}, [])


def _flatten(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, Mapping):  # "key: value" too, as the simulated user's prompt lists a fact
        return [text for key, item in value.items()
                for text in (str(key), *_flatten(item), *([f"{key}: {item}"] if not isinstance(item, Mapping | list) else []))]
    if isinstance(value, list | tuple | set):
        return [text for item in value for text in _flatten(item)]
    return [str(value)]
