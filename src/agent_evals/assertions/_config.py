"""Reading an assertion's ``config:`` once, with errors that name the key, the value and the allowed set.

Every assertion parses its raw config into a frozen dataclass with a `ConfigReader`;
closed vocabularies are `Literal` types whose allowed values come from ``get_args``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from agent_evals.assertions.values import render

T = TypeVar("T", bound=str)


class ConfigError(ValueError):
    """The assertion's ``config`` is missing a key or holds a bad value."""


def describe(value: Any) -> str:
    """``str 'abc'``, ``int 3``, ``list [1,2]``: the type and a short rendering of a bad value."""
    return f"{type(value).__name__} {render(value, limit=60)}"


class ConfigReader:
    """Typed getters over one assertion's raw ``config`` mapping.

    The constructor rejects a config that is not a mapping and any key outside ``keys``
    (typos such as ``expcted`` would otherwise be silently ignored).
    """

    def __init__(self, raw: Any, keys: Iterable[str]) -> None:
        self.allowed = tuple(keys)
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise ConfigError(f"config must be a mapping of settings ({self._keys()}), got {describe(raw)}")
        unknown = [str(key) for key in raw if key not in self.allowed]
        if unknown:
            raise ConfigError(
                f"unknown config key {', '.join(map(repr, unknown))}; allowed keys: {self._keys()}"
            )
        self.raw: Mapping[str, Any] = raw

    def _keys(self) -> str:
        return ", ".join(self.allowed) if self.allowed else "none"

    def has(self, key: str) -> bool:
        return key in self.raw and self.raw[key] is not None

    def require(self, key: str, what: str) -> Any:
        """The value of a required key; ``what`` describes it for the error message."""
        if not self.has(key):
            raise ConfigError(f"config.{key} is missing: give {what}")
        return self.raw[key]

    def choice(self, key: str, allowed: tuple[T, ...], default: T) -> T:
        """A value of a closed vocabulary (the ``get_args`` of a ``Literal``)."""
        value = self.raw[key] if self.has(key) else default
        if value not in allowed:
            shown = render(value, limit=60)
            raise ConfigError(f"config.{key} is {shown}, which is not allowed; allowed: {', '.join(allowed)}")
        return value

    def string(self, key: str, default: str | None = None, *, what: str = "a non-empty string") -> str:
        value = self.raw[key] if self.has(key) else default
        if value is None:
            raise ConfigError(f"config.{key} is missing: give {what}")
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"config.{key} must be {what}, got {describe(value)}")
        return value

    def string_list(
        self,
        key: str,
        *,
        required: bool,
        allow_empty: bool = True,
        what: str = "a list of tool names or globs",
    ) -> tuple[str, ...]:
        if not self.has(key):
            if required:
                raise ConfigError(f"config.{key} is missing: give {what}")
            return ()
        value = self.raw[key]
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise ConfigError(f"config.{key} must be {what}, got {describe(value)}")
        if not value and not allow_empty:
            raise ConfigError(f"config.{key} must not be empty: give {what}")
        return tuple(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.raw[key] if self.has(key) else default
        if not isinstance(value, bool):
            raise ConfigError(f"config.{key} must be true or false, got {describe(value)}")
        return value

    def integer(self, key: str, *, minimum: int, default: int | None = None) -> int | None:
        value = self.raw[key] if self.has(key) else default
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(f"config.{key} must be an integer >= {minimum}, got {describe(value)}")
        return value

    def number(self, key: str, *, minimum: float, maximum: float, default: float) -> float:
        value = self.raw[key] if self.has(key) else default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not minimum <= value <= maximum:
            raise ConfigError(
                f"config.{key} must be a number from {minimum} to {maximum}, got {describe(value)}"
            )
        return float(value)

    def mapping(self, key: str, *, required: bool, what: str) -> Mapping[str, Any] | None:
        if not self.has(key):
            if required:
                raise ConfigError(f"config.{key} is missing: give {what}")
            return None
        value = self.raw[key]
        if not isinstance(value, Mapping):
            raise ConfigError(f"config.{key} must be {what}, got {describe(value)}")
        return value
